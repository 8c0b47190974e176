/* SPDX-License-Identifier: MIT */
/*
 * test_iwv_engine.c - the I/O engine over real TCP sockets on loopback.
 *
 * Every case runs once per backend (loop index 0 = epoll, 1 = io_uring), so
 * the two are held to the same callback behaviour.  A test endpoint ("tep")
 * owns an rx buffer and a tx queue of chunks and records every callback.
 * Each side of a connection usually has its own engine, so one side can be
 * paused by not driving it.  Waiting is always poll(engine fd) and then
 * progress of the engines that polled readable; a wait fails after 20 s
 * without a single callback, so a missed wake-up of the engine fd fails a
 * test instead of going unseen, and a loaded machine only makes it slower.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <iwarp/iw_err.h>
#include <iwarp/mpa.h>

#include "iwv_engine.h"
#include "th.h"

#define WAIT_LIMIT_S  20
#define MiB	      (1024u * 1024u)
#define SMALL_SOCKBUF (32 * 1024)

static const enum iwv_engine_type engine_types[2] = {IWV_ENGINE_EPOLL, IWV_ENGINE_URING};

/*
 * Whether this build and kernel should give a working io_uring engine.  Built
 * in: $IW_TEST_URING (1/0) when the build system says, else a guess from
 * liburing's header being visible.  Kernel: io_uring_setup() works here.
 */
static bool uring_expected(void)
{
	const char *env = getenv("IW_TEST_URING");
	struct io_uring_params p;
	bool built;
	int fd;

#if defined(IWARP_HAVE_URING) || __has_include(<liburing.h>)
	built = true;
#else
	built = false;
#endif
	if (env && *env)
		built = strcmp(env, "0") != 0;
	if (!built)
		return false;
	memset(&p, 0, sizeof(p));
	fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* ---------------------------------------------------------------------- */
/* Test endpoints                                                          */
/* ---------------------------------------------------------------------- */

struct chunk {
	const uint8_t *p;
	size_t len;
};

struct tep {
	struct iwv_ep ep;
	struct iwv_engine *eng;

	/* rx: into rxbuf, or (store mode) at rxdst + rx_total */
	uint8_t *rxbuf;
	size_t rxcap;
	uint8_t *rxdst;
	size_t rxdst_cap;
	uint8_t *cur_buf; /* what the last rx_buf() gave */
	size_t cur_len;
	uint64_t rx_total;
	uint32_t rx_crc;
	int rx_calls;
	bool rx_eof;
	int rx_err;
	int rx_after_end;
	const uint8_t *expect; /* the octets rx should see, in order */
	uint64_t mismatches;

	/* tx: a queue of chunks, or (echo) rxdst[tx_total, rx_total) */
	struct chunk *q;
	size_t qn, qcap, qhead, qoff;
	bool echo;
	size_t last_offered;
	uint64_t tx_total;
	int tx_done_calls;
	int short_sends;
	int max_iov_given;
	int max_iov_allowed;
	int tx_err;

	/* CONNECTING / LISTEN */
	int conn_calls;
	int conn_err;
	int acc_fds[16];
	int nacc;
	int acc_err;
	bool add_accepted; /* accepted fds are not added: the test does it */

	int released;
	int after_release; /* callbacks after remove (must stay 0) */
	bool removed;

	/* behaviour hooks */
	bool remove_on_rx;
	struct tep *remove_also;
	bool remove_on_tx_done;
	bool remove_on_accept;
	bool free_on_release;
	int *release_counter; /* survive a freed tep */
	int *rx_counter;
	int *late_counter; /* callbacks after remove */
};

static void tep_free(struct tep *t)
{
	free(t->rxbuf);
	free(t->q);
	free(t);
}

static struct tep *to_tep(struct iwv_ep *ep)
{
	return ep->owner;
}

static void tep_note_callback(struct tep *t)
{
	if (!t->removed)
		return;
	t->after_release++;
	if (t->late_counter)
		(*t->late_counter)++;
}

static void tep_rx_buf(struct iwv_ep *ep, void **buf, size_t *len)
{
	struct tep *t = to_tep(ep);

	tep_note_callback(t);
	if (t->rxdst && t->rx_total < t->rxdst_cap) {
		t->cur_buf = t->rxdst + t->rx_total;
		t->cur_len = t->rxdst_cap - t->rx_total;
		if (t->cur_len > t->rxcap)
			t->cur_len = t->rxcap;
	} else {
		t->cur_buf = t->rxbuf;
		t->cur_len = t->rxcap;
	}
	*buf = t->cur_buf;
	*len = t->cur_len;
}

static void tep_remove(struct tep *t, bool abort)
{
	t->removed = true;
	iwv_engine_remove(t->eng, &t->ep, abort);
}

static void tep_rx(struct iwv_ep *ep, ssize_t n)
{
	struct tep *t = to_tep(ep);

	tep_note_callback(t);
	t->rx_calls++;
	if (t->rx_counter)
		(*t->rx_counter)++;
	if (t->rx_eof || t->rx_err)
		t->rx_after_end++;
	if (n == 0) {
		t->rx_eof = true;
		return;
	}
	if (n < 0) {
		t->rx_err = (int)n;
		return;
	}
	ck_assert_uint_le((size_t)n, t->cur_len);
	t->rx_crc = mpa_crc32c_update(t->rx_crc, t->cur_buf, (size_t)n);
	if (t->expect && memcmp(t->cur_buf, t->expect + t->rx_total, (size_t)n))
		t->mismatches++;
	/* A receive posted before store mode was set (io_uring posts one as
	 * soon as the ep is added) landed in rxbuf. */
	if (t->rxdst && t->cur_buf != t->rxdst + t->rx_total) {
		ck_assert_uint_le(t->rx_total + (uint64_t)n, t->rxdst_cap);
		memcpy(t->rxdst + t->rx_total, t->cur_buf, (size_t)n);
	}
	t->rx_total += (uint64_t)n;
	if (t->echo)
		iwv_engine_kick_tx(t->eng, &t->ep);
	if (t->remove_on_rx) {
		if (t->remove_also)
			tep_remove(t->remove_also, false);
		tep_remove(t, false);
	}
}

static int tep_tx_iov(struct iwv_ep *ep, struct iovec *iov, int max)
{
	struct tep *t = to_tep(ep);
	size_t off, i, piece;
	uint64_t pos;
	int n = 0;

	tep_note_callback(t);
	if (max > t->max_iov_allowed)
		t->max_iov_allowed = max;
	t->last_offered = 0;
	if (t->echo) {
		/* Echo what arrived, in small pieces: many iovecs per call. */
		for (pos = t->tx_total; pos < t->rx_total && n < max; pos += piece) {
			piece = t->rx_total - pos;
			if (piece > 16384)
				piece = 16384;
			iov[n].iov_base = t->rxdst + pos;
			iov[n].iov_len = piece;
			t->last_offered += piece;
			n++;
		}
	} else {
		off = t->qoff;
		for (i = t->qhead; i < t->qn && n < max; i++) {
			iov[n].iov_base = (void *)(uintptr_t)(t->q[i].p + off);
			iov[n].iov_len = t->q[i].len - off;
			t->last_offered += iov[n].iov_len;
			off = 0;
			n++;
		}
	}
	if (n > t->max_iov_given)
		t->max_iov_given = n;
	return n;
}

static void tep_tx_done(struct iwv_ep *ep, ssize_t n)
{
	struct tep *t = to_tep(ep);
	size_t left;

	tep_note_callback(t);
	t->tx_done_calls++;
	if (n < 0) {
		t->tx_err = (int)n;
		return;
	}
	ck_assert_int_gt(n, 0);
	ck_assert_uint_le((size_t)n, t->last_offered);
	if ((size_t)n < t->last_offered)
		t->short_sends++;
	t->tx_total += (uint64_t)n;
	if (!t->echo) {
		left = (size_t)n;
		while (left) {
			size_t in_chunk = t->q[t->qhead].len - t->qoff;

			if (left < in_chunk) {
				t->qoff += left;
				break;
			}
			left -= in_chunk;
			t->qhead++;
			t->qoff = 0;
		}
	}
	if (t->remove_on_tx_done)
		tep_remove(t, true);
}

static void tep_connected(struct iwv_ep *ep, int err)
{
	struct tep *t = to_tep(ep);

	tep_note_callback(t);
	t->conn_calls++;
	t->conn_err = err;
}

static void tep_accepted(struct iwv_ep *ep, int fd)
{
	struct tep *t = to_tep(ep);

	tep_note_callback(t);
	if (fd < 0) {
		t->acc_err = fd;
		return;
	}
	ck_assert_int_lt(t->nacc, 16);
	t->acc_fds[t->nacc++] = fd;
	if (t->remove_on_accept)
		tep_remove(t, false);
}

static void tep_released(struct iwv_ep *ep)
{
	struct tep *t = to_tep(ep);

	ck_assert(t->removed);
	t->released++;
	if (t->release_counter)
		(*t->release_counter)++;
	if (t->free_on_release)
		tep_free(t);
}

static const struct iwv_ep_ops tep_ops = {
	.rx_buf = tep_rx_buf,
	.rx = tep_rx,
	.tx_iov = tep_tx_iov,
	.tx_done = tep_tx_done,
	.connected = tep_connected,
	.accepted = tep_accepted,
	.released = tep_released,
};

static struct tep *tep_alloc(struct iwv_engine *eng, int fd, enum iwv_ep_kind kind)
{
	struct tep *t = calloc(1, sizeof(*t));

	ck_assert_ptr_nonnull(t);
	t->ep.fd = fd;
	t->ep.kind = kind;
	t->ep.ops = &tep_ops;
	t->ep.owner = t;
	t->eng = eng;
	t->rxcap = 256 * 1024;
	t->rxbuf = malloc(t->rxcap);
	ck_assert_ptr_nonnull(t->rxbuf);
	t->rx_crc = MPA_CRC32C_INIT;
	return t;
}

static struct tep *tep_new(struct iwv_engine *eng, int fd, enum iwv_ep_kind kind)
{
	struct tep *t = tep_alloc(eng, fd, kind);

	ck_assert_int_eq(iwv_engine_add(eng, &t->ep), IW_OK);
	return t;
}

static void tep_queue(struct tep *t, const void *p, size_t len)
{
	if (t->qn == t->qcap) {
		t->qcap = t->qcap ? 2 * t->qcap : 64;
		t->q = realloc(t->q, t->qcap * sizeof(*t->q));
		ck_assert_ptr_nonnull(t->q);
	}
	t->q[t->qn].p = p;
	t->q[t->qn].len = len;
	t->qn++;
}

/* ---------------------------------------------------------------------- */
/* Engines and waiting                                                     */
/* ---------------------------------------------------------------------- */

struct rig {
	enum iwv_engine_type type;
	struct iwv_engine *eng[2]; /* [0] client side, [1] server side */
	bool paused[2];
	struct timespec deadline;
};

/* false: this backend is not available here (and that was expected). */
static bool rig_open(struct rig *r, int i)
{
	int rc;

	memset(r, 0, sizeof(*r));
	r->type = engine_types[i];
	rc = iwv_engine_create(r->type, &r->eng[0]);
	if (r->type == IWV_ENGINE_URING && !uring_expected()) {
		ck_assert_int_eq(rc, IW_ENOTSUP);
		ck_assert_ptr_null(r->eng[0]);
		return false;
	}
	ck_assert_int_eq(rc, IW_OK);
	ck_assert_int_eq(iwv_engine_create(r->type, &r->eng[1]), IW_OK);
	ck_assert_str_eq(iwv_engine_name(r->eng[0]), i ? "uring" : "epoll");
	return true;
}

static void rig_close(struct rig *r)
{
	iwv_engine_destroy(r->eng[0]);
	iwv_engine_destroy(r->eng[1]);
}

static void rig_arm(struct rig *r)
{
	clock_gettime(CLOCK_MONOTONIC, &r->deadline);
	r->deadline.tv_sec += WAIT_LIMIT_S;
}

static bool rig_expired(const struct rig *r)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > r->deadline.tv_sec ||
	       (now.tv_sec == r->deadline.tv_sec && now.tv_nsec >= r->deadline.tv_nsec);
}

/* One round: poll the running engines, progress those that are readable.
 * Returns the number of callbacks made. */
static int rig_step(struct rig *r, int timeout_ms)
{
	struct pollfd pfd[2];
	int idx[2], n = 0, i, cb = 0;

	for (i = 0; i < 2; i++) {
		if (!r->eng[i] || r->paused[i])
			continue;
		pfd[n].fd = iwv_engine_fd(r->eng[i]);
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		idx[n++] = i;
	}
	if (poll(pfd, (nfds_t)n, timeout_ms) < 0)
		ck_assert_int_eq(errno, EINTR);
	for (i = 0; i < n; i++)
		if (pfd[i].revents & POLLIN)
			cb += iwv_engine_progress(r->eng[idx[i]]);
	return cb;
}

#define RIG_WAIT(r, cond)                                                                          \
	do {                                                                                       \
		rig_arm(r);                                                                        \
		while (!(cond)) {                                                                  \
			if (rig_expired(r))                                                        \
				ck_abort_msg("no progress in %d s waiting for: %s", WAIT_LIMIT_S,  \
					     #cond);                                               \
			if (rig_step(r, 50) > 0)                                                   \
				rig_arm(r);                                                        \
		}                                                                                  \
	} while (0)

/* Drive until the running engines stay quiet for 200 ms: everything that can
 * happen without the paused side has happened. */
static void rig_settle(struct rig *r)
{
	struct pollfd pfd[2];
	int n, i;

	rig_arm(r);
	for (;;) {
		if (rig_expired(r))
			ck_abort_msg("engines never went quiet in %d s", WAIT_LIMIT_S);
		for (n = 0, i = 0; i < 2; i++) {
			if (r->eng[i] && !r->paused[i]) {
				pfd[n].fd = iwv_engine_fd(r->eng[i]);
				pfd[n].events = POLLIN;
				pfd[n].revents = 0;
				n++;
			}
		}
		if (poll(pfd, (nfds_t)n, 200) == 0)
			return;
		rig_step(r, 0);
	}
}

/* ---------------------------------------------------------------------- */
/* Sockets                                                                 */
/* ---------------------------------------------------------------------- */

static void set_bufs(int fd, int size)
{
	if (size <= 0)
		return;
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)), 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)), 0);
}

/* A loopback socket bound to port 0; listening if asked.  -1 when the
 * family is not available on this host (IPv6 switched off). */
static int bound_socket(int family, bool do_listen, int bufsize, struct sockaddr_storage *ss,
			socklen_t *sslen)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0 && family == AF_INET6 && errno == EAFNOSUPPORT)
		return -1;
	ck_assert_int_ge(fd, 0);
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*sslen = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		*sslen = sizeof(*sin6);
	}
	set_bufs(fd, bufsize);
	if (bind(fd, (struct sockaddr *)ss, *sslen) < 0) {
		ck_assert_msg(family == AF_INET6 && errno == EADDRNOTAVAIL, "bind: %s",
			      strerror(errno));
		close(fd);
		return -1;
	}
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)ss, sslen), 0);
	if (do_listen)
		ck_assert_int_eq(listen(fd, 64), 0);
	return fd;
}

static int connecting_socket(const struct sockaddr_storage *ss, socklen_t sslen, int bufsize)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	set_bufs(fd, bufsize);
	if (connect(fd, (const struct sockaddr *)ss, sslen) < 0)
		ck_assert_int_eq(errno, EINPROGRESS);
	return fd;
}

static int sockopt_int(int fd, int level, int name)
{
	int v = -1;
	socklen_t len = sizeof(v);

	ck_assert_int_eq(getsockopt(fd, level, name, &v, &len), 0);
	return v;
}

static void wait_released(struct rig *r, struct tep *t)
{
	RIG_WAIT(r, t->released);
	ck_assert_int_eq(t->released, 1);
	ck_assert_int_eq(t->after_release, 0);
}

/* A connected pair: client in eng[0], server in eng[1]; false if the family
 * is not available. */
static bool tcp_pair(struct rig *r, int family, int bufsize, struct tep **client,
		     struct tep **server)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	struct tep *lst, *cl;
	int lfd = bound_socket(family, true, bufsize, &ss, &sslen);

	if (lfd < 0)
		return false;
	lst = tep_new(r->eng[1], lfd, IWV_EP_LISTEN);
	cl = tep_new(r->eng[0], connecting_socket(&ss, sslen, bufsize), IWV_EP_CONNECTING);
	RIG_WAIT(r, cl->conn_calls && lst->nacc);
	ck_assert_int_eq(cl->conn_err, 0);
	ck_assert_int_eq(cl->ep.kind, IWV_EP_STREAM);
	ck_assert_int_eq(lst->nacc, 1);
	*client = cl;
	*server = tep_new(r->eng[1], lst->acc_fds[0], IWV_EP_STREAM);
	tep_remove(lst, false);
	wait_released(r, lst);
	tep_free(lst);
	return true;
}

static void close_pair(struct rig *r, struct tep *a, struct tep *b)
{
	r->paused[0] = r->paused[1] = false;
	tep_remove(a, false);
	tep_remove(b, false);
	wait_released(r, a);
	wait_released(r, b);
	tep_free(a);
	tep_free(b);
}

static uint8_t *random_bytes(struct th_rng *rng, size_t n)
{
	uint8_t *p = malloc(n);

	ck_assert_ptr_nonnull(p);
	th_rng_fill(rng, p, n);
	return p;
}

/* Queue src in chunks of random sizes in [1, maxchunk]. */
static void queue_random_chunks(struct tep *t, struct th_rng *rng, const uint8_t *src, size_t n,
				size_t maxchunk)
{
	size_t off = 0, len;

	while (off < n) {
		len = (size_t)th_rng_range(rng, 1, maxchunk);
		if (len > n - off)
			len = n - off;
		tep_queue(t, src + off, len);
		off += len;
	}
}

/* ---------------------------------------------------------------------- */
/* Cases                                                                   */
/* ---------------------------------------------------------------------- */

static void check_accept_and_talk(struct rig *r, int family)
{
	struct sockaddr_storage ss, cli_name, peer_name;
	socklen_t sslen, cli_len = sizeof(cli_name), peer_len = sizeof(peer_name);
	struct tep *lst, *cl[3], *sv;
	int lfd = bound_socket(family, true, 0, &ss, &sslen), i, fd;

	if (lfd < 0) {
		fprintf(stderr, "family %d not available here: skipped\n", family);
		return;
	}
	lst = tep_new(r->eng[1], lfd, IWV_EP_LISTEN);
	for (i = 0; i < 3; i++)
		cl[i] = tep_new(r->eng[0], connecting_socket(&ss, sslen, 0), IWV_EP_CONNECTING);
	RIG_WAIT(r, cl[0]->conn_calls && cl[1]->conn_calls && cl[2]->conn_calls && lst->nacc == 3);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(cl[i]->conn_calls, 1);
		ck_assert_int_eq(cl[i]->conn_err, 0);
		ck_assert_int_eq(cl[i]->ep.kind, IWV_EP_STREAM);
		ck_assert_int_eq(sockopt_int(cl[i]->ep.fd, IPPROTO_TCP, TCP_NODELAY), 1);
		fd = lst->acc_fds[i];
		ck_assert_int_ne(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
		ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
		ck_assert_int_eq(sockopt_int(fd, IPPROTO_TCP, TCP_NODELAY), 1);
	}
	ck_assert_int_eq(lst->acc_err, 0);

	/* The first accepted fd is the first client's connection: talk both ways. */
	ck_assert_int_eq(getsockname(cl[0]->ep.fd, (struct sockaddr *)&cli_name, &cli_len), 0);
	for (i = 0; i < 3; i++) {
		peer_len = sizeof(peer_name);
		ck_assert_int_eq(
			getpeername(lst->acc_fds[i], (struct sockaddr *)&peer_name, &peer_len), 0);
		if (peer_len == cli_len && !memcmp(&peer_name, &cli_name, cli_len))
			break;
	}
	ck_assert_int_lt(i, 3);
	sv = tep_new(r->eng[1], lst->acc_fds[i], IWV_EP_STREAM);
	tep_queue(cl[0], "ping", 4);
	iwv_engine_kick_tx(r->eng[0], &cl[0]->ep);
	tep_queue(sv, "pong!", 5);
	iwv_engine_kick_tx(r->eng[1], &sv->ep);
	RIG_WAIT(r, sv->rx_total == 4 && cl[0]->rx_total == 5);
	ck_assert_mem_eq(sv->rxbuf, "ping", 4);
	ck_assert_mem_eq(cl[0]->rxbuf, "pong!", 5);
	ck_assert_int_eq(cl[0]->tx_total, 4);
	ck_assert_int_eq(sv->tx_total, 5);

	for (i = 0; i < 3; i++)
		if (lst->acc_fds[i] != sv->ep.fd)
			close(lst->acc_fds[i]);
	tep_remove(lst, false);
	wait_released(r, lst);
	ck_assert_int_eq(lst->ep.fd, -1);
	tep_free(lst);
	close_pair(r, cl[0], sv);
	for (i = 1; i < 3; i++) {
		tep_remove(cl[i], false);
		wait_released(r, cl[i]);
		tep_free(cl[i]);
	}
}

START_TEST(listen_connect_accept_on_ipv4_and_ipv6_loopback)
{
	struct rig r;

	if (!rig_open(&r, _i))
		return;
	check_accept_and_talk(&r, AF_INET);
	check_accept_and_talk(&r, AF_INET6);
	rig_close(&r);
}
END_TEST

START_TEST(echo_of_64_mib_through_small_socket_buffers_arrives_intact)
{
	const size_t total = 64 * MiB;
	struct th_rng rng;
	struct rig r;
	struct tep *cl, *sv;
	uint8_t *src;

	if (!rig_open(&r, _i))
		return;
	th_rng_init(&rng, th_seed_from_env());
	ck_assert(tcp_pair(&r, AF_INET, SMALL_SOCKBUF, &cl, &sv));
	src = random_bytes(&rng, total);
	sv->echo = true;
	sv->rxdst = malloc(total);
	ck_assert_ptr_nonnull(sv->rxdst);
	sv->rxdst_cap = total;
	cl->expect = src;
	sv->expect = src;
	queue_random_chunks(cl, &rng, src, total, 16384);
	iwv_engine_kick_tx(r.eng[0], &cl->ep);
	RIG_WAIT(&r, cl->rx_total >= total || cl->rx_err || sv->rx_err || cl->rx_eof);

	ck_assert_uint_eq(cl->tx_total, total);
	ck_assert_uint_eq(sv->rx_total, total);
	ck_assert_uint_eq(sv->tx_total, total);
	ck_assert_uint_eq(cl->rx_total, total);
	ck_assert_uint_eq(cl->mismatches, 0);
	ck_assert_uint_eq(mpa_crc32c_final(cl->rx_crc), mpa_crc32c(src, total));
	ck_assert_uint_eq(mpa_crc32c_final(sv->rx_crc), mpa_crc32c(src, total));
	/* Many iovecs per call, and the sockets took less than offered. */
	ck_assert_int_ge(cl->max_iov_allowed, 16);
	ck_assert_int_eq(cl->max_iov_given, cl->max_iov_allowed);
	ck_assert_int_gt(sv->max_iov_given, 1);
	ck_assert_int_gt(cl->short_sends, 0);
	ck_assert_int_eq(cl->tx_err, 0);
	ck_assert_int_eq(sv->tx_err, 0);

	free(sv->rxdst);
	close_pair(&r, cl, sv);
	free(src);
	rig_close(&r);
}
END_TEST

START_TEST(slow_reader_stalls_the_writer_then_catches_up)
{
	const size_t total = 8 * MiB;
	struct th_rng rng;
	struct rig r;
	struct tep *cl, *sv;
	uint8_t *src;

	if (!rig_open(&r, _i))
		return;
	th_rng_init(&rng, th_seed_from_env());
	ck_assert(tcp_pair(&r, AF_INET, SMALL_SOCKBUF, &cl, &sv));
	src = random_bytes(&rng, total);
	sv->expect = src;
	queue_random_chunks(cl, &rng, src, total, 65536);

	r.paused[1] = true; /* the reader does not poll */
	iwv_engine_kick_tx(r.eng[0], &cl->ep);
	rig_settle(&r);
	ck_assert_uint_gt(cl->tx_total, 0);
	ck_assert_uint_lt(cl->tx_total, total);
	ck_assert_uint_eq(sv->rx_total, 0);
	ck_assert_int_eq(cl->tx_err, 0);

	r.paused[1] = false;
	RIG_WAIT(&r, sv->rx_total >= total || sv->rx_err || sv->rx_eof);
	ck_assert_uint_eq(sv->rx_total, total);
	ck_assert_uint_eq(cl->tx_total, total);
	ck_assert_uint_eq(sv->mismatches, 0);
	ck_assert_uint_eq(mpa_crc32c_final(sv->rx_crc), mpa_crc32c(src, total));

	close_pair(&r, cl, sv);
	free(src);
	rig_close(&r);
}
END_TEST

START_TEST(bursts_of_many_small_kicks_arrive_in_order)
{
	const int kicks = 20000;
	struct th_rng rng;
	struct rig r;
	struct tep *cl, *sv;
	uint8_t *src;
	size_t off = 0, len, total = (size_t)kicks * 64;
	int k;

	if (!rig_open(&r, _i))
		return;
	th_rng_init(&rng, th_seed_from_env());
	ck_assert(tcp_pair(&r, AF_INET, 0, &cl, &sv));
	src = random_bytes(&rng, total);
	sv->expect = src;
	for (k = 0; k < kicks; k++) {
		len = (size_t)th_rng_range(&rng, 1, 64);
		tep_queue(cl, src + off, len);
		off += len;
		iwv_engine_kick_tx(r.eng[0], &cl->ep);
		if (k % 1000 == 999)
			rig_step(&r, 0);
	}
	RIG_WAIT(&r, sv->rx_total >= off || sv->rx_err || sv->rx_eof);
	ck_assert_uint_eq(sv->rx_total, off);
	ck_assert_uint_eq(cl->tx_total, off);
	ck_assert_uint_eq(sv->mismatches, 0);
	ck_assert_uint_eq(mpa_crc32c_final(sv->rx_crc), mpa_crc32c(src, off));
	/* io_uring: a kick while a send flies only marks it; sends coalesce. */
	if (r.type == IWV_ENGINE_URING)
		ck_assert_int_lt(cl->tx_done_calls, kicks / 2);

	close_pair(&r, cl, sv);
	free(src);
	rig_close(&r);
}
END_TEST

START_TEST(connect_to_a_closed_port_reports_econnrefused)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	struct rig r;
	struct tep *cl;
	int hold;

	if (!rig_open(&r, _i))
		return;
	/* Bound but not listening: the port is ours and refuses connections. */
	hold = bound_socket(AF_INET, false, 0, &ss, &sslen);
	cl = tep_new(r.eng[0], connecting_socket(&ss, sslen, 0), IWV_EP_CONNECTING);
	tep_queue(cl, "lost", 4);
	iwv_engine_kick_tx(r.eng[0], &cl->ep); /* kept for after the connect */
	RIG_WAIT(&r, cl->conn_calls);
	ck_assert_int_eq(cl->conn_err, -ECONNREFUSED);
	rig_settle(&r); /* nothing more is reported for a dead ep */
	ck_assert_int_eq(cl->conn_calls, 1);
	ck_assert_int_eq(cl->rx_calls, 0);
	ck_assert_int_eq(cl->tx_done_calls, 0);
	tep_remove(cl, false);
	wait_released(&r, cl);
	tep_free(cl);
	close(hold);
	rig_close(&r);
}
END_TEST

START_TEST(shutdown_wr_after_pending_data_delivers_it_all_then_eof)
{
	const size_t total = 4 * MiB;
	struct th_rng rng;
	struct rig r;
	struct tep *cl, *sv;
	uint8_t *src;

	if (!rig_open(&r, _i))
		return;
	th_rng_init(&rng, th_seed_from_env());
	ck_assert(tcp_pair(&r, AF_INET, SMALL_SOCKBUF, &cl, &sv));
	src = random_bytes(&rng, total);
	sv->expect = src;
	queue_random_chunks(cl, &rng, src, total, 65536);
	iwv_engine_kick_tx(r.eng[0], &cl->ep);
	ck_assert_uint_lt(cl->tx_total, total); /* the socket cannot take 4 MiB */
	iwv_engine_shutdown_wr(r.eng[0], &cl->ep);
	RIG_WAIT(&r, sv->rx_eof || sv->rx_err);
	ck_assert(sv->rx_eof);
	ck_assert_int_eq(sv->rx_err, 0);
	ck_assert_uint_eq(sv->rx_total, total);
	ck_assert_uint_eq(sv->mismatches, 0);
	ck_assert_uint_eq(mpa_crc32c_final(sv->rx_crc), mpa_crc32c(src, total));

	/* Reception goes on after our FIN.  The server queues octets without
	 * a kick: shutdown_wr() itself must send them before the FIN. */
	tep_queue(sv, "after", 5);
	iwv_engine_shutdown_wr(r.eng[1], &sv->ep);
	RIG_WAIT(&r, cl->rx_eof || cl->rx_err);
	ck_assert(cl->rx_eof);
	ck_assert_uint_eq(cl->rx_total, 5);
	ck_assert_mem_eq(cl->rxbuf, "after", 5);
	rig_settle(&r);
	ck_assert_int_eq(sv->rx_after_end, 0);
	ck_assert_int_eq(cl->rx_after_end, 0);

	close_pair(&r, cl, sv);
	free(src);
	rig_close(&r);
}
END_TEST

START_TEST(abort_remove_resets_the_peer_and_plain_remove_ends_its_stream)
{
	struct rig r;
	struct tep *cl, *sv;

	if (!rig_open(&r, _i))
		return;
	ck_assert(tcp_pair(&r, AF_INET, 0, &cl, &sv));
	tep_remove(cl, true);
	RIG_WAIT(&r, sv->rx_err || sv->rx_eof);
	ck_assert_int_eq(sv->rx_err, -ECONNRESET);
	ck_assert(!sv->rx_eof);
	wait_released(&r, cl);
	tep_free(cl);
	tep_remove(sv, false);
	wait_released(&r, sv);
	tep_free(sv);

	ck_assert(tcp_pair(&r, AF_INET, 0, &cl, &sv));
	tep_remove(cl, false);
	RIG_WAIT(&r, sv->rx_err || sv->rx_eof);
	ck_assert(sv->rx_eof);
	ck_assert_int_eq(sv->rx_err, 0);
	wait_released(&r, cl);
	tep_free(cl);
	tep_remove(sv, false);
	wait_released(&r, sv);
	tep_free(sv);
	rig_close(&r);
}
END_TEST

START_TEST(remove_with_receive_and_send_in_flight_releases_exactly_once)
{
	const size_t total = 8 * MiB;
	struct th_rng rng;
	struct rig r;
	struct tep *cl, *sv;
	uint8_t *src;
	int cl_released = 0, sv_released = 0, late = 0, tx_calls, rx_calls;

	if (!rig_open(&r, _i))
		return;
	th_rng_init(&rng, th_seed_from_env());
	ck_assert(tcp_pair(&r, AF_INET, SMALL_SOCKBUF, &cl, &sv));
	src = random_bytes(&rng, total);
	queue_random_chunks(cl, &rng, src, total, 65536);
	cl->free_on_release = sv->free_on_release = true;
	cl->release_counter = &cl_released;
	sv->release_counter = &sv_released;
	cl->late_counter = sv->late_counter = &late;

	/* The writer fills both socket buffers: its send waits for room
	 * (io_uring: a sendmsg in flight) and its receive waits for data. */
	r.paused[1] = true;
	iwv_engine_kick_tx(r.eng[0], &cl->ep);
	rig_settle(&r);
	tx_calls = cl->tx_done_calls;
	rx_calls = cl->rx_calls;
	ck_assert_uint_lt(cl->tx_total, total);
	tep_remove(cl, false);
	if (r.type == IWV_ENGINE_URING)
		ck_assert_int_eq(cl_released, 0); /* operations still refer to it */
	else
		ck_assert_int_eq(cl_released, 1);
	if (!cl_released) {
		ck_assert_int_eq(cl->tx_done_calls, tx_calls);
		ck_assert_int_eq(cl->rx_calls, rx_calls);
	}
	RIG_WAIT(&r, cl_released);

	/* The reader, removed with its receive in flight and data waiting. */
	tep_remove(sv, false);
	r.paused[1] = false;
	RIG_WAIT(&r, sv_released);
	rig_settle(&r);
	ck_assert_int_eq(cl_released, 1);
	ck_assert_int_eq(sv_released, 1);
	ck_assert_int_eq(late, 0);
	free(src);
	rig_close(&r);
}
END_TEST

START_TEST(remove_from_inside_callbacks_is_safe)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	struct rig r;
	struct tep *lst, *c[2], *s[2], *cl, *sv;
	int released[2] = {0, 0}, lfd, i, avail, srv_rx = 0, late = 0;

	if (!rig_open(&r, _i))
		return;

	/* rx of one ep removes itself and a sibling whose data is ready in
	 * the same batch: one rx callback in all, each released once. */
	lfd = bound_socket(AF_INET, true, 0, &ss, &sslen);
	lst = tep_new(r.eng[1], lfd, IWV_EP_LISTEN);
	for (i = 0; i < 2; i++)
		c[i] = tep_new(r.eng[0], connecting_socket(&ss, sslen, 0), IWV_EP_CONNECTING);
	RIG_WAIT(&r, c[0]->conn_calls && c[1]->conn_calls && lst->nacc == 2);
	for (i = 0; i < 2; i++) {
		tep_queue(c[i], "0123456789", 10);
		iwv_engine_kick_tx(r.eng[0], &c[i]->ep);
	}
	RIG_WAIT(&r, c[0]->tx_total == 10 && c[1]->tx_total == 10);
	rig_arm(&r);
	for (i = 0; i < 2; i++) {
		do {
			ck_assert(!rig_expired(&r));
			ck_assert_int_eq(ioctl(lst->acc_fds[i], FIONREAD, &avail), 0);
		} while (avail < 10 && poll(NULL, 0, 10) >= 0);
	}
	r.paused[0] = true;
	for (i = 0; i < 2; i++) {
		s[i] = tep_alloc(r.eng[1], lst->acc_fds[i], IWV_EP_STREAM);
		s[i]->remove_on_rx = true;
		s[i]->rxcap = 4; /* a full buffer: the engine would read on */
		s[i]->free_on_release = true;
		s[i]->release_counter = &released[i];
		s[i]->rx_counter = &srv_rx;
		s[i]->late_counter = &late;
	}
	s[0]->remove_also = s[1];
	s[1]->remove_also = s[0];
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(iwv_engine_add(r.eng[1], &s[i]->ep), IW_OK);
	RIG_WAIT(&r, released[0] && released[1]);
	rig_settle(&r);
	ck_assert_int_eq(released[0], 1);
	ck_assert_int_eq(released[1], 1);
	ck_assert_int_eq(srv_rx, 1);
	ck_assert_int_eq(late, 0);
	r.paused[0] = false;
	/* EOF, or a reset where unread data was closed on. */
	RIG_WAIT(&r, (c[0]->rx_eof || c[0]->rx_err) && (c[1]->rx_eof || c[1]->rx_err));
	for (i = 0; i < 2; i++) {
		tep_remove(c[i], false);
		wait_released(&r, c[i]);
		tep_free(c[i]);
	}

	/* accepted() removes the listener with more connections queued: the
	 * accept loop stops there. */
	lst->remove_on_accept = true;
	lst->nacc = 0;
	r.paused[1] = true;
	for (i = 0; i < 2; i++)
		c[i] = tep_new(r.eng[0], connecting_socket(&ss, sslen, 0), IWV_EP_CONNECTING);
	RIG_WAIT(&r, c[0]->conn_calls && c[1]->conn_calls);
	r.paused[0] = true;
	r.paused[1] = false;
	RIG_WAIT(&r, lst->released);
	rig_settle(&r);
	ck_assert_int_eq(lst->released, 1);
	ck_assert_int_eq(lst->nacc, 1);
	ck_assert_int_eq(lst->after_release, 0);
	close(lst->acc_fds[0]);
	tep_free(lst);
	r.paused[0] = false;
	for (i = 0; i < 2; i++) {
		tep_remove(c[i], true);
		wait_released(&r, c[i]);
		tep_free(c[i]);
	}

	/* tx_done() of a complete write removes its own ep (abort): the send
	 * loop must not ask tx_iov() again. */
	ck_assert(tcp_pair(&r, AF_INET, SMALL_SOCKBUF, &cl, &sv));
	cl->remove_on_tx_done = true;
	cl->free_on_release = true;
	cl->release_counter = &released[0];
	cl->late_counter = &late;
	released[0] = 0;
	tep_queue(cl, "abc", 3);
	iwv_engine_kick_tx(r.eng[0], &cl->ep);
	RIG_WAIT(&r, released[0] && (sv->rx_err || sv->rx_eof));
	rig_settle(&r);
	ck_assert_int_eq(released[0], 1);
	ck_assert_int_eq(late, 0);
	ck_assert_int_eq(sv->rx_err, -ECONNRESET);
	tep_remove(sv, false);
	wait_released(&r, sv);
	tep_free(sv);
	rig_close(&r);
}
END_TEST

START_TEST(engine_fd_polls_readable_only_when_there_is_work)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	struct pollfd pfd;
	struct rig r;
	struct tep *sv;
	int lfd, cfd, afd = -1, efd, n;

	if (!rig_open(&r, _i))
		return;
	lfd = bound_socket(AF_INET, true, 0, &ss, &sslen);
	cfd = connecting_socket(&ss, sslen, 0);
	pfd.fd = lfd;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, WAIT_LIMIT_S * 1000), 1);
	afd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	ck_assert_int_ge(afd, 0);
	sv = tep_new(r.eng[1], afd, IWV_EP_STREAM);
	efd = iwv_engine_fd(r.eng[1]);

	/* Idle: once progress has done what there was, the fd is quiet. */
	rig_arm(&r);
	do {
		ck_assert(!rig_expired(&r));
		n = iwv_engine_progress(r.eng[1]);
		pfd.fd = efd;
		pfd.events = POLLIN;
	} while (n || poll(&pfd, 1, 0));
	ck_assert_int_eq(poll(&pfd, 1, 100), 0);
	ck_assert_int_eq(iwv_engine_progress(r.eng[1]), 0);
	ck_assert_int_eq(sv->rx_calls, 0);

	ck_assert_int_eq(send(cfd, "x", 1, 0), 1);
	ck_assert_int_eq(poll(&pfd, 1, WAIT_LIMIT_S * 1000), 1);
	ck_assert(pfd.revents & POLLIN);
	ck_assert_int_gt(iwv_engine_progress(r.eng[1]), 0);
	ck_assert_int_eq(sv->rx_calls, 1);
	ck_assert_uint_eq(sv->rx_total, 1);
	ck_assert_int_eq(sv->rxbuf[0], 'x');

	close(cfd);
	close(lfd);
	tep_remove(sv, false);
	wait_released(&r, sv);
	tep_free(sv);
	rig_close(&r);
}
END_TEST

struct add_job {
	struct iwv_engine *eng;
	struct tep *t;
	int rc;
};

static void *add_in_thread(void *arg)
{
	struct add_job *job = arg;

	job->rc = iwv_engine_add(job->eng, &job->t->ep);
	return NULL;
}

START_TEST(operations_started_by_a_thread_that_has_exited_keep_working)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	struct add_job job;
	struct rig r;
	struct tep *lst, *cl, *sv;
	pthread_t th;

	if (!rig_open(&r, _i))
		return;
	lst = tep_new(r.eng[1], bound_socket(AF_INET, true, 0, &ss, &sslen), IWV_EP_LISTEN);
	cl = tep_new(r.eng[0], connecting_socket(&ss, sslen, 0), IWV_EP_CONNECTING);
	RIG_WAIT(&r, cl->conn_calls && lst->nacc);
	ck_assert_int_eq(cl->conn_err, 0);

	/* io_uring: the kernel cancels the requests of a thread that exits;
	 * the receive this thread posted must be made again, not reported. */
	sv = tep_alloc(r.eng[1], lst->acc_fds[0], IWV_EP_STREAM);
	job.eng = r.eng[1];
	job.t = sv;
	job.rc = -1;
	ck_assert_int_eq(pthread_create(&th, NULL, add_in_thread, &job), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(job.rc, IW_OK);
	rig_settle(&r);
	tep_queue(cl, "hello", 5);
	iwv_engine_kick_tx(r.eng[0], &cl->ep);
	RIG_WAIT(&r, sv->rx_total == 5 || sv->rx_err || sv->rx_eof);
	ck_assert_int_eq(sv->rx_err, 0);
	ck_assert_uint_eq(sv->rx_total, 5);
	ck_assert_mem_eq(sv->rxbuf, "hello", 5);

	tep_remove(lst, false);
	wait_released(&r, lst);
	tep_free(lst);
	close_pair(&r, cl, sv);
	rig_close(&r);
}
END_TEST

START_TEST(iwarp_engine_variable_selects_the_backend)
{
	struct iwv_engine *e = NULL;
	bool uring = uring_expected();

	setenv("IWARP_ENGINE", "epoll", 1);
	ck_assert_int_eq(iwv_engine_create(IWV_ENGINE_DEFAULT, &e), IW_OK);
	ck_assert_str_eq(iwv_engine_name(e), "epoll");
	iwv_engine_destroy(e);

	setenv("IWARP_ENGINE", "uring", 1);
	e = NULL;
	if (uring) {
		ck_assert_int_eq(iwv_engine_create(IWV_ENGINE_DEFAULT, &e), IW_OK);
		ck_assert_str_eq(iwv_engine_name(e), "uring");
		iwv_engine_destroy(e);
	} else {
		ck_assert_int_eq(iwv_engine_create(IWV_ENGINE_DEFAULT, &e), IW_ENOTSUP);
	}

	/* An explicit type is not overridden by the variable. */
	e = NULL;
	ck_assert_int_eq(iwv_engine_create(IWV_ENGINE_EPOLL, &e), IW_OK);
	ck_assert_str_eq(iwv_engine_name(e), "epoll");
	iwv_engine_destroy(e);

	setenv("IWARP_ENGINE", "kqueue", 1);
	e = (struct iwv_engine *)&e;
	ck_assert_int_eq(iwv_engine_create(IWV_ENGINE_DEFAULT, &e), IW_EINVAL);
	ck_assert_ptr_null(e);

	/* Without the variable: epoll (the faster one here), uring or not. */
	unsetenv("IWARP_ENGINE");
	ck_assert_int_eq(iwv_engine_create(IWV_ENGINE_DEFAULT, &e), IW_OK);
	ck_assert_str_eq(iwv_engine_name(e), "epoll");
	iwv_engine_destroy(e);

	ck_assert_int_eq(iwv_engine_create((enum iwv_engine_type)99, &e), IW_EINVAL);
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("verbs");
	TCase *tc = tcase_create("engine");

	/* Loop index: 0 = epoll, 1 = io_uring. */
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, listen_connect_accept_on_ipv4_and_ipv6_loopback, 0, 2);
	tcase_add_loop_test(tc, echo_of_64_mib_through_small_socket_buffers_arrives_intact, 0, 2);
	tcase_add_loop_test(tc, slow_reader_stalls_the_writer_then_catches_up, 0, 2);
	tcase_add_loop_test(tc, bursts_of_many_small_kicks_arrive_in_order, 0, 2);
	tcase_add_loop_test(tc, connect_to_a_closed_port_reports_econnrefused, 0, 2);
	tcase_add_loop_test(tc, shutdown_wr_after_pending_data_delivers_it_all_then_eof, 0, 2);
	tcase_add_loop_test(tc, abort_remove_resets_the_peer_and_plain_remove_ends_its_stream, 0,
			    2);
	tcase_add_loop_test(tc, remove_with_receive_and_send_in_flight_releases_exactly_once, 0, 2);
	tcase_add_loop_test(tc, remove_from_inside_callbacks_is_safe, 0, 2);
	tcase_add_loop_test(tc, engine_fd_polls_readable_only_when_there_is_work, 0, 2);
	tcase_add_loop_test(tc, operations_started_by_a_thread_that_has_exited_keep_working, 0, 2);
	tcase_add_test(tc, iwarp_engine_variable_selects_the_backend);
	suite_add_tcase(s, tc);
	return s;
}

TH_MAIN(engine_suite)
