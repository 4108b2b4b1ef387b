/* hiredis (Debian's libhiredis-dev): PORT PATTERN N [HOST], PATTERN one of loop, pipeline, multi.
 * pipeline: redisAppendCommand N times, then redisGetReply N times. */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reply(redisContext *c) {
	redisReply *r;
	if (redisGetReply(c, (void **)&r) != REDIS_OK) {
		fprintf(stderr, "%s\n", c->errstr);
		exit(1);
	}
	freeReplyObject(r);
}

int main(int argc, char **argv) {
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: hiredis PORT PATTERN N [HOST]\n");
		return 2;
	}
	int n = atoi(argv[3]);
	redisContext *c = redisConnect(argc > 4 ? argv[4] : "127.0.0.1", atoi(argv[1]));
	if (!c || c->err) {
		fprintf(stderr, "connect: %s\n", c ? c->errstr : "no memory");
		return 1;
	}
	if (strcmp(argv[2], "loop") == 0) {
		for (int i = 0; i < n; i++) {
			redisReply *r = redisCommand(c, "SET c:%d %d", i, i);
			if (!r) {
				fprintf(stderr, "%s\n", c->errstr);
				return 1;
			}
			freeReplyObject(r);
		}
	} else if (strcmp(argv[2], "pipeline") == 0 || strcmp(argv[2], "multi") == 0) {
		int multi = strcmp(argv[2], "multi") == 0;
		if (multi)
			redisAppendCommand(c, "MULTI");
		for (int i = 0; i < n; i++)
			redisAppendCommand(c, "SET c:%d %d", i, i);
		if (multi)
			redisAppendCommand(c, "EXEC");
		for (int i = 0; i < n + 2 * multi; i++)
			reply(c);
	} else {
		fprintf(stderr, "unknown pattern %s\n", argv[2]);
		return 2;
	}
	redisFree(c);
	return 0;
}
