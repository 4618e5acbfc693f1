// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "qmp.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "json_line.h"
#include "parse_num.h"

/*
 * QEMU's answers are read as JSON (lib/json_line), never searched as text:
 * a reply or event is told by its top-level members only, so that a
 * "return" inside an event's data, or inside a string, is not taken for one.
 */
int qmp_return_string(const char *line, char *out, size_t len)
{
	enum json_line_type type = 0;
	ssize_t n;

	if (!len)
		return -1;
	n = json_line_value(line, "return", 0, &type, out, len, NULL, 0);
	/* refused, not cut; and a \u0000 inside would cut the C string */
	if (n < 0 || type != JSON_LINE_STRING || (size_t)n >= len || strlen(out) != (size_t)n)
		return -1;
	return 0;
}

static int has_member(const char *line, const char *name)
{
	return json_line_member(line, name, NULL, 0, NULL, 0) >= 0;
}

int qmp_message_kind(const char *line)
{
	if (has_member(line, "return"))
		return QMP_RETURN;
	if (has_member(line, "error"))
		return QMP_ERROR;
	if (has_member(line, "event"))
		return QMP_EVENT;
	if (has_member(line, "QMP"))
		return QMP_GREETING;
	return QMP_OTHER;
}

int qmp_parse_gpa2hva(const char *text, uint64_t gpa, uint64_t *hva)
{
	static const char head[] = "Host virtual address for ";
	const char *p = strstr(text, head), *is;
	char num[24];
	uint64_t said, v;
	size_t n;

	if (!p)
		return -1;
	p += strlen(head);
	n = strcspn(p, " ");
	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, p, n);
	num[n] = 0;
	if (parse_u64(num, UINT64_MAX, &said) || said != gpa)
		return -1;
	is = strstr(p, ") is ");
	if (!is)
		return -1;
	is += strlen(") is ");
	n = strcspn(is, "\r\n ");
	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, is, n);
	num[n] = 0;
	if (parse_u64(num, UINT64_MAX, &v) || !v)
		return -1;
	*hva = v;
	return 0;
}

/* How long QEMU may take to accept, or to say anything. */
#define QMP_TIMEOUT_MS	10000

/* One line (a QMP message) into buf; -1 on EOF, error or 10 s of silence. */
static int read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, QMP_TIMEOUT_MS) <= 0)
			return -1;
		r = read(fd, buf + n, 1);
		if (r <= 0)
			return -1;
		if (buf[n] == '\n') {
			buf[n] = 0;
			return 0;
		}
		n++;
	}
	return -1;	/* longer than any reply we ask for */
}

/* The next line that is not an asynchronous event. */
static int read_reply(int fd, char *buf, size_t len)
{
	do {
		if (read_line(fd, buf, len))
			return -1;
	} while (qmp_message_kind(buf) == QMP_EVENT);
	return 0;
}

static int send_all(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			return -1;
		s += w;
		n -= w;
	}
	return 0;
}

/*
 * Connect, bounded: a non-blocking Unix connect() to a listener whose
 * backlog is full (a QEMU that stopped accepting) fails with EAGAIN
 * instead of waiting for ever; tried again every 50 ms for QMP_TIMEOUT_MS.
 * The fd (blocking again: every read after is bounded by poll()), or -1.
 */
static int connect_bounded(const struct sockaddr_un *sa)
{
	struct timespec slice = { .tv_nsec = 50 * 1000000L };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	unsigned int waited = 0;

	if (fd < 0)
		return -1;
	while (connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		if ((errno != EAGAIN && errno != EINTR) || waited >= QMP_TIMEOUT_MS) {
			if (errno == EAGAIN)
				errno = ETIMEDOUT;
			close(fd);
			return -1;
		}
		nanosleep(&slice, NULL);
		waited += 50;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		close(fd);
		return -1;
	}
	return fd;
}

int qmp_hmp(const char *path, const char *command, char *out, size_t len, char *err,
	    size_t err_len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char line[4096], req[512];
	int fd, r = -1;

	if (strlen(path) >= sizeof(sa.sun_path) || strpbrk(command, "\"\\\n")) {
		snprintf(err, err_len, "QMP socket path too long, or a command with quotes");
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = connect_bounded(&sa);
	if (fd < 0) {
		snprintf(err, err_len, "cannot connect to QMP socket %s: %s", path, strerror(errno));
		goto out;
	}
	if (read_line(fd, line, sizeof(line)) || qmp_message_kind(line) != QMP_GREETING) {
		snprintf(err, err_len, "%s: no QMP greeting (is it QEMU's -qmp socket?)", path);
		goto out;
	}
	if (send_all(fd, "{\"execute\":\"qmp_capabilities\"}\n") ||
	    read_reply(fd, line, sizeof(line)) || qmp_message_kind(line) != QMP_RETURN) {
		snprintf(err, err_len, "%s: qmp_capabilities refused: %.200s", path, line);
		goto out;
	}
	snprintf(req, sizeof(req), "{\"execute\":\"human-monitor-command\","
		 "\"arguments\":{\"command-line\":\"%s\"}}\n", command);
	if (send_all(fd, req) || read_reply(fd, line, sizeof(line))) {
		snprintf(err, err_len, "%s: no answer to '%s'", path, command);
		goto out;
	}
	if (qmp_return_string(line, out, len)) {
		snprintf(err, err_len, "%s: '%s' failed: %.200s", path, command, line);
		goto out;
	}
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	return r;
}

/* The value of json's member name (NULL: its first element), if it is of type want: malloc'd. */
static char *value_dup(const char *json, const char *name, enum json_line_type want)
{
	enum json_line_type type = 0;
	ssize_t n = json_line_value(json, name, 0, &type, NULL, 0, NULL, 0);
	char *s;

	if (n < 0 || type != want)
		return NULL;
	s = malloc((size_t)n + 1);
	if (s)
		json_line_value(json, name, 0, NULL, s, (size_t)n + 1, NULL, 0);
	return s;
}

int qmp_first_thread_id(const char *reply, long *tid)
{
	char *cpus = value_dup(reply, "return", JSON_LINE_ARRAY);
	char *cpu0 = cpus ? value_dup(cpus, NULL, JSON_LINE_OBJECT) : NULL;
	enum json_line_type type = 0;
	char num[24];
	ssize_t n = cpu0 ? json_line_value(cpu0, "thread-id", 0, &type, num, sizeof(num), NULL, 0) : -1;
	uint64_t v;

	free(cpus);
	free(cpu0);
	/*
	 * a whole decimal number, as a tid is spelt: no sign, fraction or
	 * exponent, no leading zero; at most the kernel's PID_MAX_LIMIT
	 */
	if (n <= 0 || (size_t)n >= sizeof(num) || type != JSON_LINE_NUMBER ||
	    parse_field_u64(num, (size_t)n, 10, 0x3fffffff, &v) || !v)
		return -1;
	*tid = (long)v;
	return 0;
}
