/* SPDX-License-Identifier: MIT */
/*
 * Corpus: the Lua 5.4 interpreter (Debian's liblua5.4.a) running a script:
 * deep recursion, closures, coroutines, pcall/error (setjmp/longjmp under
 * the hood), string patterns, table sorting, floating-point formatting.
 * lua [N]: N scales the work (the profile test runs it longer).
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>

static const char script[] =
"local n = tonumber(arg_n)\n"
"local function fib(k) if k < 2 then return k end return fib(k-1) + fib(k-2) end\n"
"print('fib', fib(20 + n))\n"
"local function depth(k) if k == 0 then return 0 end return 1 + depth(k-1) end\n"
"print('depth', depth(50000))\n"
"local t = {}\n"
"local x = 12345\n"
"for i = 1, 20000 * n do x = (x * 1103515245 + 12345) % 2147483648; t[i] = x end\n"
"table.sort(t)\n"
"local h = 0\n"
"for i = 1, #t, 97 do h = (h * 31 + t[i]) % 4294967296 end\n"
"print('sort', #t, t[1], t[#t], h)\n"
"local words = {}\n"
"local s = string.rep('the quick brown fox jumps over the lazy dog ', 200 * n)\n"
"for w in s:gmatch('%a+') do words[w] = (words[w] or 0) + 1 end\n"
"local keys = {}\n"
"for k in pairs(words) do keys[#keys + 1] = k end\n"
"table.sort(keys)\n"
"for _, k in ipairs(keys) do io.write(k, '=', words[k], ' ') end\n"
"print()\n"
"print('gsub', (s:sub(1, 44):gsub('(%w+)', '<%1>')))\n"
"local co = coroutine.wrap(function(a)\n"
"  local sum = 0\n"
"  for i = 1, a do sum = sum + coroutine.yield(i) end\n"
"  return sum\n"
"end)\n"
"local v, r = co(1000), 0\n"
"for i = 1, 1000 do r = co(v * 2); v = r end\n"
"print('coroutine', r)\n"
"local errs = 0\n"
"for i = 1, 1000 do\n"
"  local ok, e = pcall(function() if i % 3 == 0 then error({code = i}) end return i end)\n"
"  if not ok then errs = errs + e.code end\n"
"end\n"
"print('pcall', errs)\n"
"print('float', string.format('%.10g %.3f %g', math.pi * 1e6, math.sqrt(2), 1/3))\n"
"local mt = setmetatable({}, {__index = function(_, k) return k * 2 end})\n"
"print('meta', mt[21], select('#', table.unpack({1, 2, 3, nil, 5}, 1, 5)))\n"
"print('int', math.maxinteger, 7 // 2, 7 % -3, 2^53)\n";

int main(int argc, char **argv)
{
	lua_State *L = luaL_newstate();

	if (!L)
		return 1;
	luaL_openlibs(L);
	lua_pushstring(L, argc > 1 ? argv[1] : "1");
	lua_setglobal(L, "arg_n");
	if (luaL_loadbuffer(L, script, sizeof(script) - 1, "corpus") ||
	    lua_pcall(L, 0, 0, 0)) {
		fprintf(stderr, "lua: %s\n", lua_tostring(L, -1));
		lua_close(L);
		return 1;
	}
	lua_close(L);
	return 0;
}
