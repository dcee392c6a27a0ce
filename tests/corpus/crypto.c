/* SPDX-License-Identifier: MIT */
/*
 * Corpus: OpenSSL's libcrypto (Debian's libcrypto.a): digests, HMAC, and
 * AES-256-CBC, AES-256-GCM and ChaCha20-Poly1305 encryption with fixed keys
 * and IVs, each decrypted back.  No random numbers, so the output is
 * comparable with the native run's.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>
#include "corpus.h"

#define N (256 << 10)

static void hex(const char *name, const unsigned char *p, unsigned int n)
{
	printf("%s ", name);
	for (unsigned int i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\n");
}

static int cipher(const char *name, const unsigned char *in, unsigned char *out,
		  unsigned char *back)
{
	static const unsigned char key[32] = "0123456789abcdef0123456789abcde";
	static const unsigned char iv[16] = "fedcba987654321";
	const EVP_CIPHER *c = EVP_get_cipherbyname(name);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int aead = c && (EVP_CIPHER_get_flags(c) & EVP_CIPH_FLAG_AEAD_CIPHER);
	unsigned char tag[16];
	int len, olen, blen;

	if (!c || !ctx)
		return -1;
	if (!EVP_EncryptInit_ex(ctx, c, NULL, key, aead ? iv + 4 : iv) ||
	    !EVP_EncryptUpdate(ctx, out, &len, in, N) ||
	    !EVP_EncryptFinal_ex(ctx, out + len, &olen))
		return -1;
	olen += len;
	if (aead && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag))
		return -1;
	if (!EVP_DecryptInit_ex(ctx, c, NULL, key, aead ? iv + 4 : iv) ||
	    (aead && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag)) ||
	    !EVP_DecryptUpdate(ctx, back, &len, out, olen) ||
	    !EVP_DecryptFinal_ex(ctx, back + len, &blen))
		return -1;
	blen += len;
	printf("%s: %d bytes hash %016llx round trip %s\n", name, olen,
	       (unsigned long long)corpus_hash(out, olen),
	       blen == N && !memcmp(in, back, N) ? "ok" : "BAD");
	if (aead)
		hex("  tag", tag, 16);
	EVP_CIPHER_CTX_free(ctx);
	return 0;
}

int main(void)
{
	static const char *const digests[] = {
		"MD5", "SHA1", "SHA256", "SHA512", "SHA3-256", "BLAKE2b512",
	};
	static const char *const ciphers[] = {
		"AES-256-CBC", "AES-256-GCM", "ChaCha20-Poly1305",
	};
	unsigned char *in = corpus_alloc(N), *out = corpus_alloc(N + 64);
	unsigned char *back = corpus_alloc(N + 64);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen;

	corpus_text(in, N, 5);
	for (size_t i = 0; i < sizeof(digests) / sizeof(digests[0]); i++) {
		const EVP_MD *md_type = EVP_get_digestbyname(digests[i]);

		if (!md_type || !EVP_Digest(in, N, md, &mdlen, md_type, NULL)) {
			fprintf(stderr, "crypto: digest %s failed\n", digests[i]);
			return 1;
		}
		hex(digests[i], md, mdlen);
	}
	if (!HMAC(EVP_sha256(), "key", 3, in, N, md, &mdlen))
		return 1;
	hex("HMAC-SHA256", md, mdlen);
	for (size_t i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++) {
		if (cipher(ciphers[i], in, out, back)) {
			fprintf(stderr, "crypto: cipher %s failed\n", ciphers[i]);
			return 1;
		}
	}
	return 0;
}
