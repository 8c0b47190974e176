/* SPDX-License-Identifier: MIT */
/* ih.c - helpers for the integration tests (see ih.h). */
#include "ih.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "th.h"

uint64_t ih_deadline;

static bool in_peer;		       /* this process is the forked peer: failures _exit() */
static pid_t peer_pid;		       /* the test process: its peer, while it runs */
static const char *peer_name = "peer"; /* in messages of either process */

void ih_fail_at(const char *file, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (in_peer) {
		/* Check's reporting belongs to the parent: the peer speaks by exit status. */
		fprintf(stderr, "%s %d: %s:%d: %s\n", peer_name, (int)getpid(), file, line, msg);
		_exit(3);
	}
	if (peer_pid > 0) {
		int st = 0;

		/* a failing peer closes its connections: its own message says why */
		if (waitpid(peer_pid, &st, WNOHANG) == peer_pid)
			ck_abort_msg("%s:%d: %s (the %s had exited, status %#x)", file, line, msg,
				     peer_name, st);
		kill(peer_pid, SIGKILL);
	}
	ck_abort_msg("%s:%d: %s", file, line, msg);
	abort();
}

void ih_check_deadline(const char *what)
{
	REQ(th_now_ms() < ih_deadline, "deadline passed while %s", what);
}

pid_t ih_fork_peer(const char *name, unsigned int alarm_secs)
{
	pid_t parent = getpid(), pid;

	peer_name = name;
	pid = fork();
	REQ(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		in_peer = true;
		peer_pid = 0;
		/* never outlive the test, whatever happens to it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(4);
		alarm(alarm_secs);
		return 0;
	}
	peer_pid = pid;
	return pid;
}

int ih_reap_peer(pid_t pid)
{
	int st = 0;
	pid_t r;

	while ((r = waitpid(pid, &st, WNOHANG)) == 0) {
		if (th_now_ms() >= ih_deadline) {
			peer_pid = 0;
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			REQ(0, "the %s did not end", peer_name);
		}
		usleep(5000);
	}
	peer_pid = 0;
	REQ(r == pid, "waitpid: %s", strerror(errno));
	return st;
}

void ih_set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	REQ(fl >= 0, "F_GETFL: %s", strerror(errno));
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	REQ(fcntl(fd, F_SETFL, fl) == 0, "F_SETFL: %s", strerror(errno));
}

void *ih_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	REQ(p != MAP_FAILED, "mmap %zu: %s", len, strerror(errno));
	return p;
}

void ih_side_init(struct ih_side *s, struct iwv_context *ctx, int cqe)
{
	s->ctx = ctx;
	s->pd = iwv_alloc_pd(ctx);
	REQ(s->pd, "iwv_alloc_pd: %s", strerror(errno));
	s->cch = iwv_create_comp_channel(ctx);
	REQ(s->cch, "iwv_create_comp_channel: %s", strerror(errno));
	ih_set_nonblock(s->cch->fd, true);
	s->cq = iwv_create_cq(ctx, cqe, NULL, s->cch, 0);
	REQ(s->cq, "iwv_create_cq: %s", strerror(errno));
	s->ech = iwcm_create_event_channel_ctx(ctx);
	REQ(s->ech, "iwcm_create_event_channel_ctx: %s", strerror(errno));
	ih_set_nonblock(s->ech->fd, true);
}

void ih_side_close(struct ih_side *s)
{
	struct iwv_cq *ecq;
	void *cctx;

	/* an event of the last arming may still be queued: take and acknowledge it */
	ih_set_nonblock(s->cch->fd, true);
	while (iwv_get_cq_event(s->cch, &ecq, &cctx) == 0)
		iwv_ack_cq_events(ecq, 1);
	REQ(iwv_destroy_cq(s->cq) == 0, "iwv_destroy_cq");
	REQ(iwv_destroy_comp_channel(s->cch) == 0, "iwv_destroy_comp_channel");
	REQ(iwcm_destroy_event_channel(s->ech) == 0, "iwcm_destroy_event_channel: %s",
	    strerror(errno));
	REQ(iwv_dealloc_pd(s->pd) == 0, "iwv_dealloc_pd");
	REQ(iwv_close_device(s->ctx) == 0, "iwv_close_device");
}
