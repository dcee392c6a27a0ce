// SPDX-License-Identifier: MIT
/*
 * The step source's branch emulation: where counting by blocks stops a
 * block at its branch (an int3 in the program's code, or a copy's exit),
 * the VMM retires that branch itself, as the CPU would have.
 */
#include <errno.h>
#include <string.h>

#include "guest_mem.h"
#include "step_internal.h"
#include "x86_decode.h"
#include "x86_insn.h"

/* Branches emulate() knows; a block ending in another is single-stepped. */
bool branch_emulable(const struct block *b)
{
	if (b->insn.opsize)
		return false;
	switch (b->br) {
	case X86_BR_JCC:
	case X86_BR_JMP:
	case X86_BR_CALL:
	case X86_BR_RET:
	case X86_BR_JMP_IND:
	case X86_BR_CALL_IND:
		return true;
	case X86_BR_LOOP:
		return !b->insn.addrsize;
	default:
		return false;
	}
}

static bool cond_holds(uint64_t fl, unsigned int cc)
{
	bool cf = fl & 1, pf = fl >> 2 & 1, zf = fl >> 6 & 1, sf = fl >> 7 & 1,
	     of = fl >> 11 & 1, r;

	switch (cc >> 1) {
	case 0: r = of; break;
	case 1: r = cf; break;
	case 2: r = zf; break;
	case 3: r = cf || zf; break;
	case 4: r = sf; break;
	case 5: r = pf; break;
	case 6: r = sf != of; break;
	default: r = zf || sf != of; break;
	}
	return (cc & 1) ? !r : r;
}

/* The general registers as the user has them, in ModRM's order. */
static void user_gprs(const struct kvm_regs *r, const struct bp_frame *f,
		      uint64_t g[16])
{
	const uint64_t v[16] = {
		f->rax, r->rcx, r->rdx, r->rbx, f->rsp, r->rbp, r->rsi, r->rdi,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
	};

	memcpy(g, v, sizeof(v));
}

/* FF /2 and FF /4: the target, from a register or memory. */
static int indirect_target(const struct blk_ctx *c, const struct kvm_sregs *s,
			   const uint64_t g[16], const struct x86_insn *in,
			   uint64_t next, uint64_t *target, uint64_t *fault)
{
	unsigned int mod = in->modrm >> 6, rm = in->modrm & 7;
	unsigned int rex_b = in->rex & 1, rex_x = in->rex >> 1 & 1;
	uint64_t ea = (uint64_t)(int64_t)in->disp;

	if (mod == 3) {
		*target = g[rm | rex_b << 3];
		return 0;
	}
	if (in->has_sib) {
		unsigned int base = in->sib & 7, index = in->sib >> 3 & 7;

		if (index != 4 || rex_x)
			ea += g[index | rex_x << 3] << (in->sib >> 6);
		if (!(base == 5 && mod == 0))
			ea += g[base | rex_b << 3];
	} else if (mod == 0 && rm == 5) {
		ea += next;			/* RIP-relative */
	} else {
		ea += g[rm | rex_b << 3];
	}
	if (in->addrsize)
		ea = (uint32_t)ea;
	if (in->seg == 0x64)
		ea += s->fs.base;
	else if (in->seg == 0x65)
		ea += s->gs.base;
	if (gva_read(c->vm, c->cr3, target, ea, 8) != 8) {
		*fault = ea;
		return -EFAULT;
	}
	return 0;
}

static int user_push(const struct blk_ctx *c, struct bp_frame *f,
		     uint64_t val, uint64_t *fault)
{
	if (gva_write(c->vm, c->cr3, f->rsp - 8, &val, 8) != 8) {
		*fault = f->rsp - 8;
		return -EFAULT;
	}
	f->rsp -= 8;
	return 0;
}

/*
 * Retire the branch b->end as the CPU would: the frame's rip, rsp (call,
 * ret) and the user's memory and rcx (loop).  -EFAULT with *fault where
 * the CPU would have faulted; nothing then has changed.
 */
int branch_emulate(const struct blk_ctx *c, struct kvm_regs *r,
		   const struct kvm_sregs *s, struct bp_frame *f,
		   const struct block *b, uint64_t *fault)
{
	const struct x86_insn *in = &b->insn;
	uint64_t next = b->end + in->len, rel = next + (uint64_t)in->imm;
	uint64_t g[16], target = next;
	bool taken;

	switch (b->br) {
	case X86_BR_JCC:
		target = cond_holds(f->rflags, in->opcode & 15) ? rel : next;
		break;
	case X86_BR_JMP:
		target = rel;
		break;
	case X86_BR_CALL:
		if (user_push(c, f, next, fault))
			return -EFAULT;
		target = rel;
		break;
	case X86_BR_RET:
		if (gva_read(c->vm, c->cr3, &target, f->rsp, 8) != 8) {
			*fault = f->rsp;
			return -EFAULT;
		}
		f->rsp += 8 + (in->opcode == 0xc2 ? (uint16_t)in->imm : 0);
		break;
	case X86_BR_LOOP:
		if (in->opcode == 0xe3) {
			taken = r->rcx == 0;
		} else {
			r->rcx--;
			taken = r->rcx != 0 &&
				(in->opcode == 0xe2 ||
				 ((f->rflags >> 6 & 1) == (in->opcode == 0xe1)));
		}
		target = taken ? rel : next;
		break;
	case X86_BR_JMP_IND:
	case X86_BR_CALL_IND:
		user_gprs(r, f, g);
		if (indirect_target(c, s, g, in, next, &target, fault))
			return -EFAULT;
		if (b->br == X86_BR_CALL_IND && user_push(c, f, next, fault))
			return -EFAULT;
		break;
	default:
		return -EINVAL;
	}
	f->rip = target;
	return 0;
}
