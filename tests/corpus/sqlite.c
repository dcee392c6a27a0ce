/* SPDX-License-Identifier: MIT */
/*
 * Corpus: SQLite (Debian's libsqlite3.a).  sqlite DB: DB is a file path
 * (fcntl locks, pread/pwrite, fsync, ftruncate, a rollback journal created
 * and unlinked) or ":memory:".  With a third argument "wal" the file
 * database uses write-ahead logging (a shared mmap of the -shm file).
 * Prints query results only: equal to the native run's.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static sqlite3 *db;

static void exec_sql(const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sqlite: %s: %s\n", sql, err);
		exit(1);
	}
}

static int print_row(void *arg, int n, char **val, char **col)
{
	(void)arg, (void)col;
	for (int i = 0; i < n; i++)
		printf("%s%s", i ? "|" : "", val[i] ? val[i] : "NULL");
	printf("\n");
	return 0;
}

static void query(const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, print_row, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sqlite: %s: %s\n", sql, err);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	sqlite3_stmt *ins;
	const char *path = argc > 1 ? argv[1] : ":memory:";
	char name[32];

	if (sqlite3_open(path, &db) != SQLITE_OK) {
		fprintf(stderr, "sqlite: open %s: %s\n", path, sqlite3_errmsg(db));
		return 1;
	}
	if (argc > 2 && !strcmp(argv[2], "wal"))
		query("PRAGMA journal_mode=WAL");
	exec_sql("PRAGMA cache_size=64");	/* small cache: real file I/O */
	exec_sql("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, "
		 "grp INTEGER, val REAL)");
	/* Three transactions: each commit syncs and ends the journal. */
	for (int tx = 0; tx < 3; tx++) {
		exec_sql("BEGIN");
		if (sqlite3_prepare_v2(db, "INSERT INTO t(name, grp, val) "
				       "VALUES(?, ?, ?)", -1, &ins, NULL)) {
			fprintf(stderr, "sqlite: prepare: %s\n", sqlite3_errmsg(db));
			return 1;
		}
		for (int i = 0; i < 1000; i++) {
			int k = tx * 1000 + i;

			snprintf(name, sizeof(name), "row-%05d", (k * 7919) % 3000);
			sqlite3_bind_text(ins, 1, name, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int(ins, 2, k % 17);
			sqlite3_bind_double(ins, 3, k * 0.25);
			if (sqlite3_step(ins) != SQLITE_DONE) {
				fprintf(stderr, "sqlite: insert: %s\n",
					sqlite3_errmsg(db));
				return 1;
			}
			sqlite3_reset(ins);
		}
		sqlite3_finalize(ins);
		exec_sql("COMMIT");
	}
	exec_sql("CREATE INDEX t_name ON t(name)");
	query("SELECT count(*), sum(val), min(name), max(name) FROM t");
	query("SELECT grp, count(*), round(avg(val), 3) FROM t GROUP BY grp "
	      "ORDER BY grp LIMIT 5");
	query("SELECT id, name FROM t WHERE name BETWEEN 'row-01000' AND "
	      "'row-01003' ORDER BY name");
	exec_sql("DELETE FROM t WHERE grp > 8");
	exec_sql("VACUUM");			/* rewrites and truncates the file */
	query("SELECT count(*), total(val) FROM t");
	query("PRAGMA integrity_check");
	sqlite3_close(db);

	/* Reopen: what was committed is on the file. */
	if (strcmp(path, ":memory:")) {
		if (sqlite3_open(path, &db) != SQLITE_OK)
			return 1;
		query("SELECT count(*) FROM t");
		sqlite3_close(db);
	}
	return 0;
}
