// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "qmp.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "parse_num.h"

int qmp_return_string(const char *line, char *out, size_t len)
{
	const char *p = strstr(line, "\"return\"");
	size_t n = 0;

	if (!p || !len)
		return -1;
	p += strlen("\"return\"");
	while (*p == ' ' || *p == ':')
		p++;
	if (*p++ != '"')
		return -1;
	for (; *p && *p != '"'; p++) {
		char c = *p;

		if (c == '\\') {
			switch (*++p) {
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case '"': case '\\': case '/': c = *p; break;
			case 'u':	/* not in gpa2hva's answers: keep a placeholder */
				if (strnlen(p, 5) < 5)
					return -1;
				p += 4;
				c = '?';
				break;
			default:
				return -1;
			}
		}
		if (n + 1 >= len)
			return -1;
		out[n++] = c;
	}
	if (*p != '"')
		return -1;	/* unterminated */
	out[n] = 0;
	return 0;
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

/* One line (a QMP message) into buf; -1 on EOF, error or 10 s of silence. */
static int read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 10000) <= 0)
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
	} while (strstr(buf, "\"event\"") && !strstr(buf, "\"return\"") &&
		 !strstr(buf, "\"error\""));
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
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, err_len, "cannot connect to QMP socket %s: %s", path, strerror(errno));
		goto out;
	}
	if (read_line(fd, line, sizeof(line)) || !strstr(line, "\"QMP\"")) {
		snprintf(err, err_len, "%s: no QMP greeting (is it QEMU's -qmp socket?)", path);
		goto out;
	}
	if (send_all(fd, "{\"execute\":\"qmp_capabilities\"}\n") ||
	    read_reply(fd, line, sizeof(line)) || !strstr(line, "\"return\"")) {
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

int qmp_first_thread_id(const char *reply, long *tid)
{
	const char *p = strstr(reply, "\"thread-id\"");
	char *end;
	long v;

	if (!p)
		return -1;
	p += strlen("\"thread-id\"");
	while (*p == ' ' || *p == ':')
		p++;
	if (*p < '1' || *p > '9')
		return -1;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || v <= 0 || v > 0x3fffffff || (*end != ',' && *end != '}' && *end != ' '))
		return -1;
	*tid = v;
	return 0;
}
