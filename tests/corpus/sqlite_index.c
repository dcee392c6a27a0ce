/* SPDX-License-Identifier: MIT */
/*
 * Corpus: SQLite (Debian's libsqlite3.a) building an index whose sort
 * spills to a temporary file: sqlite_index [ROWS] (default 200000) fills
 * an in-memory table, then CREATE INDEX with temp_store=FILE and a 2 MiB
 * page cache, so the sorter writes and reads its runs with 4 KiB
 * pwrite64/pread64 (922 of each at 200000 rows, 271 at the tests'
 * 60000), the path issue 27 measured.  Prints a query over the index:
 * equal to the native run's.
 * The wall-time figure in docs/specification.md ("Kernel paths") is
 * `scripts/rss-wall.py 5 vmm run --mem 256M sqlite_index` against the
 * program run natively.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sqlite_index: %s\n", err);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int rows = argc > 1 ? atoi(argv[1]) : 200000;
	sqlite3_stmt *st;
	char sql[256];
	sqlite3 *db;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return 1;
	exec_sql(db, "PRAGMA temp_store=FILE; PRAGMA cache_size=-2000;"
		 "CREATE TABLE t(a INTEGER, b TEXT); BEGIN");
	snprintf(sql, sizeof(sql), "WITH RECURSIVE c(x) AS (SELECT 1 UNION "
		 "ALL SELECT x + 1 FROM c WHERE x < %d) INSERT INTO t SELECT "
		 "(x * 7919) %% 1000003, printf('%%08d', x) FROM c", rows);
	exec_sql(db, sql);
	exec_sql(db, "COMMIT; CREATE INDEX ib ON t(b, a)");
	if (sqlite3_prepare_v2(db, "SELECT count(*), sum(a) FROM t "
			       "INDEXED BY ib WHERE b > '00010000'", -1, &st,
			       NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		return 1;
	printf("rows %d: %d above, sum %lld\n", rows, sqlite3_column_int(st, 0),
	       (long long)sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return 0;
}
