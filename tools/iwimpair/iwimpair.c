/* SPDX-License-Identifier: MIT */
/*
 * iwimpair.c - a bad network between two network namespaces: a user-space IP
 * forwarder between two TUN devices that loses, duplicates, reorders, delays
 * and rate-limits what it carries.  A test tool, built but not installed:
 * test/helpers/netns.py starts it between two namespaces and the tests of
 * test/impair/ run the stack through it.  It exists because the kernels we
 * test on have no sch_netem ("qdisc kind is unknown").
 *
 * Theory of operation.
 *
 * Devices.  Side A and side B each get a TUN device (IFF_TUN | IFF_NO_PI:
 * one read or write is one bare IPv4 or IPv6 packet).  With --ns-a/--ns-b
 * the process setns()es into that namespace, opens /dev/net/tun, names the
 * device (TUNSETIFF), sets its MTU and transmit queue length (SIOCSIFMTU,
 * SIOCSIFTXQLEN on a socket of that namespace) and setns()es back: a TUN
 * device belongs to the namespace it was created in, its fd works from
 * anywhere.  The devices are not persistent, so they vanish when the
 * process exits.  Nothing else is configured here: addresses, routes and
 * link state are the caller's.
 * The kernel never hands us a packet bigger than the MTU (it fragments or
 * segments before the device), so one buffer of IWI_PKT_MAX always holds it.
 * The transmit queue is the kernel's ring of packets we have not read yet;
 * it drops silently when full (no back-pressure to TCP), so it is made
 * long (--txqueuelen, 10000 rather than the kernel's 500): a burst that
 * outruns us for a moment must not become losses nobody asked for.
 *
 * Directions.  a2b reads A's device and writes B's; b2a the reverse.  Each
 * direction has its own PRNG stream (splitmix64 from --seed and the
 * direction, so what one direction draws does not depend on the other's
 * traffic), its own queues and its own counters.  Both directions get the
 * same impairments unless --only names one.
 *
 * The life of a packet in one direction, read at time `now`:
 *   1. loss     dropped with probability --loss (counter lost);
 *   2. dup      with probability --dup a copy follows it through the rest
 *               (duplicated); the copy draws its own dice below;
 *   3. limit    a direction holds at most --limit packets and
 *               IWI_LIMIT_BYTES octets in all (limit_drops beyond): memory
 *               is bounded whatever the traffic;
 *   4. rate     a token bucket of --rate bits/s and --burst octets, filled
 *               at the rate, gives the time the packet leaves the
 *               bottleneck (its release), computed at enqueue time: the
 *               bucket is FIFO, so a packet starts when the one before it
 *               left.  Packets not yet released form the bottleneck's queue,
 *               at most --queue packets and --queue-bytes octets: tail drop
 *               beyond (queue_drops).  Only IP octets count, no link-layer
 *               overhead;
 *   5. delay    due = release + --delay + a jitter (uniform in [-J, +J], or
 *               normal with sigma J, --jitter-dist), clamped at the release,
 *               and never before the due time of the packet before: jitter
 *               spreads packets, it does not reorder them;
 *   6. reorder  with probability --reorder, a packet that falls due is held
 *               back and written right after the next packet of its
 *               direction (reordered), or --reorder-gap ms later if none
 *               comes first (then merely late).
 * Packets that need none of 4-6 (no --rate, --delay, --jitter or --reorder)
 * are written at once, without a copy.
 *
 * Timers.  Release and due times never decrease along a direction, so the
 * packets waiting form a queue that is sorted by due time by construction
 * (and the held ones one sorted by their deadline): the next timer of a
 * direction is the head of one of its two queues, no heap needed, O(1) per
 * packet.  The bottleneck's occupancy is tracked by a cursor on the first
 * packet not yet released, moved on lazily.
 *
 * Loop.  One thread: ppoll() on the two devices and a signalfd, with the
 * earliest timer as its timeout in nanoseconds (no busy loop, no periodic
 * tick).  Each wake reads at most IWI_BATCH packets per device, then writes
 * whatever has fallen due.  A write the kernel refuses (the device is down,
 * say) is counted (write_errors) and the packet dropped.
 *
 * Cut.  SIGUSR2 cuts the wire and the next SIGUSR2 mends it (--cut-at
 * starts with it cut after so many seconds): while cut, every packet read
 * in either direction is dropped (counter cut), as if the peer behind it
 * had vanished without a FIN or a reset; packets already queued still
 * leave.  This is how the tests make a peer disappear (docs/verbs.md,
 * liveness): each side's TCP sees only silence.  Each change is printed
 * ("cut on" / "cut off", and a JSON "cut" event with --json).
 *
 * Output.  The seed on stderr at start (drawn from the clock unless --seed
 * gives it: always printed, so a run can be repeated); "ready" once both
 * devices exist; the counters of each direction on SIGUSR1 and at exit
 * (SIGINT, SIGTERM, SIGHUP), as text on stderr and, with --json, as one
 * JSON object per line on stdout.  At any moment, per direction:
 *   in_pkts + duplicated = out_pkts + lost + cut + queue_drops + limit_drops
 *                          + write_errors + queued.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "iwt_clock.h"
#include "iwt_err.h"
#include "iwt_num.h"

#define PROG		   "iwimpair"

#define IWI_BATCH	   64	       /* packets read per device per wake */
#define IWI_PKT_MAX	   65536       /* read buffer: the largest MTU and then some */
#define IWI_MTU_MIN	   576	       /* below, IPv4 hosts may not even reassemble */
#define IWI_MTU_MAX	   65535       /* a TUN device's largest MTU */
#define IWI_LIMIT_BYTES	   (64u << 20) /* octets a direction may hold, hard cap */
#define IWI_LIMIT_DEFAULT  10000       /* --limit */
#define IWI_QUEUE_DEFAULT  100	       /* --queue */
#define IWI_TXQLEN_DEFAULT 10000       /* --txqueuelen */
#define IWI_GAP_DEFAULT_MS 10.0	       /* --reorder-gap */
#define IWI_MS_MAX	   60000.0     /* --delay, --jitter, --reorder-gap */
#define NS_PER_MS	   1000000.0

enum jitter_dist { JITTER_UNIFORM, JITTER_NORMAL };

/* One packet in a queue of a direction; data[] holds len octets. */
struct iwi_pkt {
	struct iwi_pkt *next;
	uint64_t release;    /* leaves the bottleneck (ns, monotonic clock) */
	uint64_t due;	     /* falls due for writing */
	uint64_t held_until; /* held by reorder: written at the latest then */
	bool hold;	     /* reorder chose it */
	uint32_t len;
	unsigned char data[];
};

/* A FIFO of packets. */
struct iwi_queue {
	struct iwi_pkt *head;
	struct iwi_pkt *tail;
};

struct iwi_stats {
	uint64_t in_pkts, in_bytes;
	uint64_t out_pkts, out_bytes;
	uint64_t lost;	       /* --loss */
	uint64_t cut;	       /* read while the wire was cut (SIGUSR2) */
	uint64_t queue_drops;  /* tail drop at the bottleneck (--queue, --queue-bytes) */
	uint64_t limit_drops;  /* --limit or IWI_LIMIT_BYTES */
	uint64_t write_errors; /* the kernel refused the write */
	uint64_t duplicated;   /* copies made (--dup) */
	uint64_t reordered;    /* written after a packet that came later (--reorder) */
	uint64_t delayed;      /* given a due time after their arrival (rate, delay) */
	uint64_t max_len;      /* largest packet read */
	uint64_t queue_max;    /* most packets waiting at the bottleneck at once */
};

struct iwi_dir {
	const char *name; /* "a2b" or "b2a" */
	int in_fd;
	int out_fd;
	bool impair; /* false: --only names the other direction */
	uint64_t rng;
	struct iwi_queue pending;   /* sorted by due */
	struct iwi_queue held;	    /* reorder: sorted by held_until */
	struct iwi_pkt *rq_first;   /* first pending packet not yet released */
	uint64_t rq_pkts, rq_bytes; /* from rq_first to the tail */
	uint64_t tb_time;	    /* token bucket: tb_tokens octets at tb_time */
	double tb_tokens;
	uint64_t last_due;
	uint64_t n_pkts, n_bytes; /* held in all (pending + held) */
	struct iwi_stats st;
};

struct iwi_cfg {
	const char *ns[2];
	const char *dev[2];
	unsigned mtu;
	unsigned txqlen;
	double loss, dup, reorder; /* percent */
	uint64_t delay_ns, jitter_ns, gap_ns;
	enum jitter_dist jitter_dist;
	double rate_bps;      /* 0: unlimited */
	uint64_t burst;	      /* octets */
	uint64_t queue_pkts;  /* 0: no limit */
	uint64_t queue_bytes; /* 0: no limit */
	uint64_t limit_pkts;
	int only; /* -1 both, else the one direction impaired */
	uint64_t seed;
	bool json;
	bool exit_with_parent;
	double cut_at_s; /* --cut-at: cut the wire this long after start (0: never) */
};

static struct iwi_cfg cfg;
static struct iwi_dir dirs[2];
static uint64_t start_ns;
static bool wire_cut; /* SIGUSR2: every packet read is dropped */

/* ---------------------------------------------------------------------- */
/* Randomness                                                              */
/* ---------------------------------------------------------------------- */

/* splitmix64: a 64-bit state advanced by a constant, then mixed. */
static uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_unit(uint64_t *state)
{
	return (double)(rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* True with probability pct percent; draws nothing when pct is 0. */
static bool rng_chance(uint64_t *state, double pct)
{
	return pct > 0 && rng_unit(state) * 100.0 < pct;
}

/* A jitter sample in ns: uniform in [-j, j] or normal with sigma j (Box-Muller). */
static double rng_jitter(uint64_t *state, uint64_t j)
{
	double u1, u2;

	if (cfg.jitter_dist == JITTER_UNIFORM)
		return (2.0 * rng_unit(state) - 1.0) * (double)j;
	u1 = 1.0 - rng_unit(state); /* (0, 1]: log() stays finite */
	u2 = rng_unit(state);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2) * (double)j;
}

/* ---------------------------------------------------------------------- */
/* Queues                                                                  */
/* ---------------------------------------------------------------------- */

static void q_push(struct iwi_queue *q, struct iwi_pkt *p)
{
	p->next = NULL;
	if (q->tail)
		q->tail->next = p;
	else
		q->head = p;
	q->tail = p;
}

static struct iwi_pkt *q_pop(struct iwi_queue *q)
{
	struct iwi_pkt *p = q->head;

	if (p) {
		q->head = p->next;
		if (!q->head)
			q->tail = NULL;
	}
	return p;
}

static void pkt_free(struct iwi_dir *d, struct iwi_pkt *p)
{
	d->n_pkts--;
	d->n_bytes -= p->len;
	free(p);
}

/* Move the bottleneck cursor past the packets released by `now`. */
static void rq_advance(struct iwi_dir *d, uint64_t now)
{
	while (d->rq_first && d->rq_first->release <= now) {
		d->rq_pkts--;
		d->rq_bytes -= d->rq_first->len;
		d->rq_first = d->rq_first->next;
	}
}

/* The earliest timer of a direction, UINT64_MAX for none. */
static uint64_t dir_next(const struct iwi_dir *d)
{
	uint64_t t = UINT64_MAX;

	if (d->pending.head)
		t = d->pending.head->due;
	if (d->held.head && d->held.head->held_until < t)
		t = d->held.head->held_until;
	return t;
}

/* ---------------------------------------------------------------------- */
/* The pipeline                                                            */
/* ---------------------------------------------------------------------- */

static void dir_write(struct iwi_dir *d, const unsigned char *data, size_t len)
{
	ssize_t n = write(d->out_fd, data, len);

	if (n == (ssize_t)len) {
		d->st.out_pkts++;
		d->st.out_bytes += len;
	} else {
		d->st.write_errors++;
	}
}

static bool cfg_queues(void)
{
	return cfg.rate_bps > 0 || cfg.delay_ns || cfg.jitter_ns || cfg.reorder > 0;
}

/* Steps 3-6 for one copy of a packet read at `now`. */
static void dir_enqueue(struct iwi_dir *d, const unsigned char *data, size_t len, uint64_t now)
{
	uint64_t release = now, due;
	struct iwi_pkt *p;

	if (d->n_pkts >= cfg.limit_pkts || d->n_bytes + len > IWI_LIMIT_BYTES) {
		d->st.limit_drops++;
		return;
	}
	if (cfg.rate_bps > 0) {
		double per_ns = cfg.rate_bps / 8e9, tokens;
		uint64_t start;

		rq_advance(d, now);
		if ((cfg.queue_pkts && d->rq_pkts >= cfg.queue_pkts) ||
		    (cfg.queue_bytes && d->rq_bytes + len > cfg.queue_bytes)) {
			d->st.queue_drops++;
			return;
		}
		start = now > d->tb_time ? now : d->tb_time;
		tokens = d->tb_tokens + (double)(start - d->tb_time) * per_ns;
		if (tokens > (double)cfg.burst)
			tokens = (double)cfg.burst;
		release = start;
		if (tokens >= (double)len) {
			tokens -= (double)len;
		} else {
			release += (uint64_t)ceil(((double)len - tokens) / per_ns);
			tokens = 0;
		}
		d->tb_time = release;
		d->tb_tokens = tokens;
	}
	due = release;
	if (cfg.delay_ns || cfg.jitter_ns) {
		double ns = (double)cfg.delay_ns;

		if (cfg.jitter_ns)
			ns += rng_jitter(&d->rng, cfg.jitter_ns);
		if (ns > 0)
			due += (uint64_t)ns;
	}
	if (due < d->last_due)
		due = d->last_due;
	d->last_due = due;

	p = malloc(sizeof(*p) + len);
	if (!p) {
		d->st.limit_drops++;
		return;
	}
	memcpy(p->data, data, len);
	p->len = (uint32_t)len;
	p->release = release;
	p->due = due;
	p->held_until = 0;
	p->hold = rng_chance(&d->rng, cfg.reorder);
	q_push(&d->pending, p);
	d->n_pkts++;
	d->n_bytes += len;
	if (release > now) {
		if (!d->rq_first)
			d->rq_first = p;
		d->rq_pkts++;
		d->rq_bytes += len;
		if (d->rq_pkts > d->st.queue_max)
			d->st.queue_max = d->rq_pkts;
	}
	if (due > now)
		d->st.delayed++;
}

/* One packet read from the direction's input device at `now`. */
static void dir_input(struct iwi_dir *d, const unsigned char *data, size_t len, uint64_t now)
{
	int copies = 1;

	d->st.in_pkts++;
	d->st.in_bytes += len;
	if (len > d->st.max_len)
		d->st.max_len = len;
	if (wire_cut) {
		d->st.cut++;
		return;
	}
	if (!d->impair) {
		dir_write(d, data, len);
		return;
	}
	if (rng_chance(&d->rng, cfg.loss)) {
		d->st.lost++;
		return;
	}
	if (rng_chance(&d->rng, cfg.dup)) {
		d->st.duplicated++;
		copies = 2;
	}
	while (copies--) {
		if (cfg_queues())
			dir_enqueue(d, data, len, now);
		else
			dir_write(d, data, len);
	}
}

/* Write what has fallen due by `now`: held packets right after the next one. */
static void dir_run(struct iwi_dir *d, uint64_t now)
{
	struct iwi_pkt *p;

	/* The head is due, so released: the cursor is past it before it is freed. */
	rq_advance(d, now);
	while (d->pending.head && d->pending.head->due <= now) {
		p = q_pop(&d->pending);
		if (p->hold) {
			p->held_until = now + cfg.gap_ns;
			q_push(&d->held, p);
			continue;
		}
		dir_write(d, p->data, p->len);
		pkt_free(d, p);
		while ((p = q_pop(&d->held))) {
			dir_write(d, p->data, p->len);
			d->st.reordered++;
			pkt_free(d, p);
		}
	}
	while (d->held.head && d->held.head->held_until <= now) {
		p = q_pop(&d->held);
		dir_write(d, p->data, p->len);
		pkt_free(d, p);
	}
}

static void dir_flush(struct iwi_dir *d)
{
	struct iwi_pkt *p;

	while ((p = q_pop(&d->pending)))
		pkt_free(d, p);
	while ((p = q_pop(&d->held)))
		pkt_free(d, p);
	d->rq_first = NULL;
}

/* Read up to IWI_BATCH packets; -1 on a read error (printed). */
static int dir_read(struct iwi_dir *d)
{
	static unsigned char buf[IWI_PKT_MAX];
	uint64_t now = iwt_now_ns();
	int i;

	for (i = 0; i < IWI_BATCH; i++) {
		ssize_t n = read(d->in_fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			iwt_msg(PROG, "%s: read: %s", d->name, strerror(errno));
			return -1;
		}
		if (n > 0)
			dir_input(d, buf, (size_t)n, now);
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Output                                                                  */
/* ---------------------------------------------------------------------- */

static void stats_text(const struct iwi_dir *d)
{
	const struct iwi_stats *s = &d->st;

	fprintf(stderr,
		PROG ": %s: in %" PRIu64 " pkts %" PRIu64 " B, out %" PRIu64 " pkts %" PRIu64
		     " B; lost %" PRIu64 ", cut %" PRIu64 ", queue-drop %" PRIu64
		     ", limit-drop %" PRIu64 ", write-err %" PRIu64 ", dup %" PRIu64
		     ", reordered %" PRIu64 ", delayed %" PRIu64 ", queued %" PRIu64
		     "; max-len %" PRIu64 ", queue-max %" PRIu64 "\n",
		d->name, s->in_pkts, s->in_bytes, s->out_pkts, s->out_bytes, s->lost, s->cut,
		s->queue_drops, s->limit_drops, s->write_errors, s->duplicated, s->reordered,
		s->delayed, d->n_pkts, s->max_len, s->queue_max);
}

static void stats_json(const struct iwi_dir *d)
{
	const struct iwi_stats *s = &d->st;

	printf("\"%s\":{\"in_pkts\":%" PRIu64 ",\"in_bytes\":%" PRIu64 ",\"out_pkts\":%" PRIu64
	       ",\"out_bytes\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"cut\":%" PRIu64
	       ",\"queue_drops\":%" PRIu64 ",\"limit_drops\":%" PRIu64 ",\"write_errors\":%" PRIu64
	       ",\"duplicated\":%" PRIu64 ",\"reordered\":%" PRIu64 ",\"delayed\":%" PRIu64
	       ",\"queued\":%" PRIu64 ",\"max_len\":%" PRIu64 ",\"queue_max\":%" PRIu64 "}",
	       d->name, s->in_pkts, s->in_bytes, s->out_pkts, s->out_bytes, s->lost, s->cut,
	       s->queue_drops, s->limit_drops, s->write_errors, s->duplicated, s->reordered,
	       s->delayed, d->n_pkts, s->max_len, s->queue_max);
}

/* `event`: "stats" (SIGUSR1) or "exit". */
static void stats_print(const char *event)
{
	double secs = (double)(iwt_now_ns() - start_ns) / 1e9;

	fprintf(stderr, PROG ": %s after %.3f s, seed %" PRIu64 "\n", event, secs, cfg.seed);
	stats_text(&dirs[0]);
	stats_text(&dirs[1]);
	if (cfg.json) {
		printf("{\"event\":\"%s\",\"seed\":%" PRIu64 ",\"elapsed_s\":%.3f,", event,
		       cfg.seed, secs);
		stats_json(&dirs[0]);
		putchar(',');
		stats_json(&dirs[1]);
		printf("}\n");
		fflush(stdout);
	}
}

/* The wire cut or mended (SIGUSR2, --cut-at). */
static void cut_set(bool on)
{
	double secs = (double)(iwt_now_ns() - start_ns) / 1e9;

	wire_cut = on;
	fprintf(stderr, PROG ": cut %s after %.3f s\n", on ? "on" : "off", secs);
	if (cfg.json) {
		printf("{\"event\":\"cut\",\"on\":%s,\"elapsed_s\":%.3f}\n", on ? "true" : "false",
		       secs);
		fflush(stdout);
	}
}

static void ready_print(void)
{
	fprintf(stderr,
		PROG ": ready: A %s%s%s <-> B %s%s%s, mtu %u, loss %g%%, dup %g%%, reorder %g%%, "
		     "delay %g ms, jitter %g ms (%s), rate %.0f bit/s, burst %" PRIu64
		     " B, queue %" PRIu64 " pkts %" PRIu64 " B, only %s\n",
		cfg.dev[0], cfg.ns[0] ? " in " : "", cfg.ns[0] ? cfg.ns[0] : "", cfg.dev[1],
		cfg.ns[1] ? " in " : "", cfg.ns[1] ? cfg.ns[1] : "", cfg.mtu, cfg.loss, cfg.dup,
		cfg.reorder, (double)cfg.delay_ns / NS_PER_MS, (double)cfg.jitter_ns / NS_PER_MS,
		cfg.jitter_dist == JITTER_NORMAL ? "normal" : "uniform", cfg.rate_bps, cfg.burst,
		cfg.queue_pkts, cfg.queue_bytes, cfg.only < 0 ? "-" : dirs[cfg.only].name);
	if (cfg.json) {
		printf("{\"event\":\"ready\",\"seed\":%" PRIu64
		       ",\"mtu\":%u,\"loss\":%g,\"dup\":%g,"
		       "\"reorder\":%g,\"delay_ms\":%g,\"jitter_ms\":%g,\"rate_bps\":%.0f,"
		       "\"burst\":%" PRIu64 ",\"queue_pkts\":%" PRIu64 ",\"queue_bytes\":%" PRIu64
		       ",\"pid\":%ld}\n",
		       cfg.seed, cfg.mtu, cfg.loss, cfg.dup, cfg.reorder,
		       (double)cfg.delay_ns / NS_PER_MS, (double)cfg.jitter_ns / NS_PER_MS,
		       cfg.rate_bps, cfg.burst, cfg.queue_pkts, cfg.queue_bytes, (long)getpid());
		fflush(stdout);
	}
}

/* ---------------------------------------------------------------------- */
/* Devices                                                                 */
/* ---------------------------------------------------------------------- */

/* A namespace by name (under /run/netns, as `ip netns add` makes them) or by path. */
static int ns_open(const char *ns)
{
	char path[PATH_MAX];

	if (strchr(ns, '/'))
		snprintf(path, sizeof(path), "%s", ns);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", ns);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * The TUN device `dev` in namespace `ns` (NULL: ours) with the MTU set;
 * `home` is our own namespace to return to.  Returns its fd or -1 (printed).
 */
static int tun_open(const char *ns, const char *dev, int home)
{
	struct ifreq ifr;
	int nsfd = -1, fd = -1, sk = -1, ret = -1;

	if (ns) {
		nsfd = ns_open(ns);
		if (nsfd < 0) {
			iwt_msg(PROG, "namespace %s: %s", ns, strerror(errno));
			return -1;
		}
		if (setns(nsfd, CLONE_NEWNET)) {
			iwt_msg(PROG, "setns %s: %s", ns, strerror(errno));
			close(nsfd);
			return -1;
		}
	}
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		iwt_msg(PROG, "/dev/net/tun: %s", strerror(errno));
		goto out;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		iwt_msg(PROG, "TUNSETIFF %s%s%s: %s", dev, ns ? " in " : "", ns ? ns : "",
			strerror(errno));
		goto out;
	}
	sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ifr.ifr_mtu = (int)cfg.mtu;
	if (sk < 0 || ioctl(sk, SIOCSIFMTU, &ifr)) {
		iwt_msg(PROG, "MTU %u on %s: %s", cfg.mtu, dev, strerror(errno));
		goto out;
	}
	ifr.ifr_qlen = (int)cfg.txqlen;
	if (ioctl(sk, SIOCSIFTXQLEN, &ifr)) {
		iwt_msg(PROG, "txqueuelen %u on %s: %s", cfg.txqlen, dev, strerror(errno));
		goto out;
	}
	ret = fd;
out:
	if (sk >= 0)
		close(sk);
	if (ret < 0 && fd >= 0)
		close(fd);
	if (ns) {
		close(nsfd);
		if (setns(home, CLONE_NEWNET)) {
			/* a process left in the wrong namespace must not go on */
			iwt_msg(PROG, "setns back: %s", strerror(errno));
			exit(IWT_EXIT_FAIL);
		}
	}
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Command line                                                            */
/* ---------------------------------------------------------------------- */

static void usage(void)
{
	printf("Usage: " PROG " [--ns-a NS] [--ns-b NS] [OPTION]...\n"
	       "\n"
	       "A bad network between two network namespaces: forward IP packets between a\n"
	       "TUN device in namespace A and one in namespace B, losing, duplicating,\n"
	       "reordering, delaying and rate-limiting them on the way, with the same\n"
	       "impairments in each direction (a2b, b2a) but independent dice, queues and\n"
	       "counters.  A test tool (test/helpers/netns.py sets it up, sch_netem being\n"
	       "absent): it creates the devices and sets their MTU, nothing else; assign\n"
	       "addresses, routes and bring the links up yourself.  Runs until SIGINT or\n"
	       "SIGTERM; the devices go with it.\n"
	       "\n"
	       "Devices:\n"
	       "      --ns-a NS          namespace of side A: a name of `ip netns add` (under\n"
	       "                         /run/netns) or a path such as /proc/PID/ns/net\n"
	       "                         (default: ours)\n"
	       "      --ns-b NS          the same for side B\n"
	       "      --dev-a NAME       TUN device of side A (default iwimp0)\n"
	       "      --dev-b NAME       TUN device of side B (default iwimp1)\n"
	       "      --mtu N            MTU of both devices, %d to %d (default 1500); the\n"
	       "                         kernel hands over no bigger packet\n"
	       "      --txqueuelen N     the devices' transmit queue, the packets the kernel\n"
	       "                         keeps for us to read, 1 to 1000000 (default %d;\n"
	       "                         the kernel drops beyond, uncounted here)\n"
	       "\n"
	       "Impairments, in this order (percentages are floats, 0 to 100):\n"
	       "      --loss P           drop a packet with probability P%%\n"
	       "      --dup P            send a packet twice with probability P%%\n"
	       "      --rate RATE        a token-bucket bottleneck of RATE bits/s; k, M, G\n"
	       "                         are powers of 1000 (e.g. 100M; default unlimited);\n"
	       "                         IP octets only, no link-layer overhead\n"
	       "      --burst N          bucket size in octets, K/M/G suffix (default the\n"
	       "                         MTU or 2 ms at RATE, the larger)\n"
	       "      --queue N          packets waiting at the bottleneck, at most N; tail\n"
	       "                         drop beyond (default %d; 0: no count limit)\n"
	       "      --queue-bytes N    ... and at most N octets, K/M/G suffix (default 0:\n"
	       "                         no octet limit)\n"
	       "      --delay MS         one-way delay in milliseconds (fractions allowed)\n"
	       "      --jitter MS        plus a random term in [-MS, MS] (uniform) or of\n"
	       "                         standard deviation MS (normal); the total never\n"
	       "                         goes below 0, and packets keep their order\n"
	       "      --jitter-dist D    uniform or normal (default uniform)\n"
	       "      --reorder P        hold a packet back with probability P%% and send it\n"
	       "                         right after the next one of its direction\n"
	       "      --reorder-gap MS   ... or after MS ms if none comes (default %g)\n"
	       "      --only DIR         impair a2b or b2a only; the other direction is a\n"
	       "                         plain wire\n"
	       "      --limit N          packets a direction may hold in all, 1 to 1000000\n"
	       "                         (default %d; also at most %u MiB), drop beyond\n"
	       "      --seed N           seed of the dice (default from the clock; printed\n"
	       "                         either way, so a run can be repeated)\n"
	       "\n",
	       IWI_MTU_MIN, IWI_MTU_MAX, IWI_TXQLEN_DEFAULT, IWI_QUEUE_DEFAULT, IWI_GAP_DEFAULT_MS,
	       IWI_LIMIT_DEFAULT, IWI_LIMIT_BYTES >> 20);
	fputs("Output and running:\n"
	      "      --json             also one JSON object per line on stdout: \"ready\"\n"
	      "                         (the settings), \"stats\" and \"exit\" (the counters)\n"
	      "      --exit-with-parent stop (as on SIGTERM) when the parent process dies\n"
	      "      --cut-at S         cut the wire S seconds after start (as SIGUSR2)\n"
	      "  -h, --help             show this help and exit\n"
	      "\n"
	      "SIGUSR2 cuts the wire (every packet read in either direction is dropped: a\n"
	      "peer that vanished without FIN or reset); the next SIGUSR2 mends it.\n"
	      "\n"
	      "Counters, per direction, on stderr on SIGUSR1 and at exit: in/out packets\n"
	      "and octets, lost (--loss), cut (read while cut), queue-drop (tail drop at\n"
	      "the bottleneck),\n"
	      "limit-drop (--limit), write-err (the kernel refused a write: device down),\n"
	      "dup (copies made), reordered (written after a later packet), delayed\n"
	      "(written later than read), queued (held right now), max-len (largest\n"
	      "packet), queue-max (longest bottleneck queue).  Always\n"
	      "  in + dup = out + lost + cut + queue-drop + limit-drop + write-err + queued.\n"
	      "\n"
	      "Example (as root; then give iwimp0 10.77.0.1/24 in A, iwimp1 10.77.0.2/24\n"
	      "in B, and bring both up):\n"
	      "  ip netns add A; ip netns add B\n"
	      "  " PROG " --ns-a A --ns-b B --loss 1 --delay 5 --jitter 1 --rate 100M &\n"
	      "\n"
	      "Exit status: 0 stopped by a signal, 1 a device or runtime failure, 2 bad\n"
	      "command line.\n",
	      stdout);
}

/* A decimal with an optional fraction in [min, max] (percentages, milliseconds). */
static int parse_real(const char *opt, const char *s, double min, double max, double *out)
{
	return iwt_num_real(PROG, opt, s, min, max, NULL, out);
}

static int parse_ms(const char *opt, const char *s, uint64_t *ns)
{
	double ms;

	if (parse_real(opt, s, 0, IWI_MS_MAX, &ms))
		return -1;
	*ns = (uint64_t)llround(ms * NS_PER_MS);
	return 0;
}

/* Bits per second: a decimal, then k, M or G (powers of 1000), at most 100G. */
static int parse_rate(const char *s, double *bps)
{
	char num[64];
	size_t n = strlen(s);
	double mult = 1, v;

	if (n == 0 || n >= sizeof(num))
		return iwt_bad_arg(PROG, "--rate", s, "not a rate such as 100M");
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'k':
	case 'K':
		mult = 1e3;
		break;
	case 'm':
	case 'M':
		mult = 1e6;
		break;
	case 'g':
	case 'G':
		mult = 1e9;
		break;
	default:
		break;
	}
	if (mult > 1)
		num[n - 1] = '\0';
	if (iwt_num_parse_seconds(num, 0, 1e12, &v) != IWT_NUM_OK)
		return iwt_bad_arg(PROG, "--rate", s, "not a rate such as 100M");
	v *= mult;
	if (v != 0 && (v < 8000 || v > 100e9))
		return iwt_bad_arg(PROG, "--rate", s,
				   "must be from 8k to 100G bit/s (0: unlimited)");
	*bps = v;
	return 0;
}

enum {
	OPT_NS_A = 256,
	OPT_NS_B,
	OPT_DEV_A,
	OPT_DEV_B,
	OPT_MTU,
	OPT_TXQLEN,
	OPT_LOSS,
	OPT_DUP,
	OPT_REORDER,
	OPT_REORDER_GAP,
	OPT_DELAY,
	OPT_JITTER,
	OPT_JITTER_DIST,
	OPT_RATE,
	OPT_BURST,
	OPT_QUEUE,
	OPT_QUEUE_BYTES,
	OPT_LIMIT,
	OPT_ONLY,
	OPT_SEED,
	OPT_JSON,
	OPT_EXIT_WITH_PARENT,
	OPT_CUT_AT,
};

static const struct option longopts[] = {
	{"ns-a", required_argument, NULL, OPT_NS_A},
	{"ns-b", required_argument, NULL, OPT_NS_B},
	{"dev-a", required_argument, NULL, OPT_DEV_A},
	{"dev-b", required_argument, NULL, OPT_DEV_B},
	{"mtu", required_argument, NULL, OPT_MTU},
	{"txqueuelen", required_argument, NULL, OPT_TXQLEN},
	{"loss", required_argument, NULL, OPT_LOSS},
	{"dup", required_argument, NULL, OPT_DUP},
	{"reorder", required_argument, NULL, OPT_REORDER},
	{"reorder-gap", required_argument, NULL, OPT_REORDER_GAP},
	{"delay", required_argument, NULL, OPT_DELAY},
	{"jitter", required_argument, NULL, OPT_JITTER},
	{"jitter-dist", required_argument, NULL, OPT_JITTER_DIST},
	{"rate", required_argument, NULL, OPT_RATE},
	{"burst", required_argument, NULL, OPT_BURST},
	{"queue", required_argument, NULL, OPT_QUEUE},
	{"queue-bytes", required_argument, NULL, OPT_QUEUE_BYTES},
	{"limit", required_argument, NULL, OPT_LIMIT},
	{"only", required_argument, NULL, OPT_ONLY},
	{"seed", required_argument, NULL, OPT_SEED},
	{"json", no_argument, NULL, OPT_JSON},
	{"exit-with-parent", no_argument, NULL, OPT_EXIT_WITH_PARENT},
	{"cut-at", required_argument, NULL, OPT_CUT_AT},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int dev_name_check(const char *opt, const char *name)
{
	if (!*name || strlen(name) >= IFNAMSIZ || strchr(name, '/') || strchr(name, '%'))
		return iwt_bad_arg(PROG, opt, name, "not a device name (1 to 15 characters)");
	return 0;
}

/* Returns 0, or IWT_EXIT_USAGE after the message; exits 0 for --help. */
static int parse_args(int argc, char **argv)
{
	bool burst_set = false, seed_set = false;
	uint64_t v;
	int c;

	cfg.dev[0] = "iwimp0";
	cfg.dev[1] = "iwimp1";
	cfg.mtu = 1500;
	cfg.txqlen = IWI_TXQLEN_DEFAULT;
	cfg.gap_ns = (uint64_t)(IWI_GAP_DEFAULT_MS * NS_PER_MS);
	cfg.queue_pkts = IWI_QUEUE_DEFAULT;
	cfg.limit_pkts = IWI_LIMIT_DEFAULT;
	cfg.only = -1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case OPT_NS_A:
		case OPT_NS_B:
			cfg.ns[c - OPT_NS_A] = optarg;
			break;
		case OPT_DEV_A:
		case OPT_DEV_B:
			bad = dev_name_check(c == OPT_DEV_A ? "--dev-a" : "--dev-b", optarg);
			cfg.dev[c - OPT_DEV_A] = optarg;
			break;
		case OPT_MTU:
			bad = iwt_num_u64(PROG, "--mtu", optarg, IWI_MTU_MIN, IWI_MTU_MAX, 0, &v);
			cfg.mtu = (unsigned)v;
			break;
		case OPT_TXQLEN:
			bad = iwt_num_u64(PROG, "--txqueuelen", optarg, 1, 1000000, 0, &v);
			cfg.txqlen = (unsigned)v;
			break;
		case OPT_LOSS:
			bad = parse_real("--loss", optarg, 0, 100, &cfg.loss);
			break;
		case OPT_DUP:
			bad = parse_real("--dup", optarg, 0, 100, &cfg.dup);
			break;
		case OPT_REORDER:
			bad = parse_real("--reorder", optarg, 0, 100, &cfg.reorder);
			break;
		case OPT_REORDER_GAP:
			bad = parse_ms("--reorder-gap", optarg, &cfg.gap_ns);
			break;
		case OPT_DELAY:
			bad = parse_ms("--delay", optarg, &cfg.delay_ns);
			break;
		case OPT_JITTER:
			bad = parse_ms("--jitter", optarg, &cfg.jitter_ns);
			break;
		case OPT_JITTER_DIST:
			if (!strcmp(optarg, "uniform"))
				cfg.jitter_dist = JITTER_UNIFORM;
			else if (!strcmp(optarg, "normal"))
				cfg.jitter_dist = JITTER_NORMAL;
			else
				bad = iwt_bad_arg(PROG, "--jitter-dist", optarg,
						  "must be uniform or normal");
			break;
		case OPT_RATE:
			bad = parse_rate(optarg, &cfg.rate_bps);
			break;
		case OPT_BURST:
			bad = iwt_num_u64(PROG, "--burst", optarg, 1, 1ull << 30, IWT_NUM_SUFFIX,
					  &cfg.burst);
			burst_set = true;
			break;
		case OPT_QUEUE:
			bad = iwt_num_u64(PROG, "--queue", optarg, 0, 1000000, 0, &cfg.queue_pkts);
			break;
		case OPT_QUEUE_BYTES:
			bad = iwt_num_u64(PROG, "--queue-bytes", optarg, 0, IWI_LIMIT_BYTES,
					  IWT_NUM_SUFFIX, &cfg.queue_bytes);
			break;
		case OPT_LIMIT:
			bad = iwt_num_u64(PROG, "--limit", optarg, 1, 1000000, 0, &cfg.limit_pkts);
			break;
		case OPT_ONLY:
			if (!strcmp(optarg, "a2b"))
				cfg.only = 0;
			else if (!strcmp(optarg, "b2a"))
				cfg.only = 1;
			else
				bad = iwt_bad_arg(PROG, "--only", optarg, "must be a2b or b2a");
			break;
		case OPT_SEED:
			bad = iwt_num_u64(PROG, "--seed", optarg, 0, UINT64_MAX, 0, &cfg.seed);
			seed_set = true;
			break;
		case OPT_JSON:
			cfg.json = true;
			break;
		case OPT_EXIT_WITH_PARENT:
			cfg.exit_with_parent = true;
			break;
		case OPT_CUT_AT:
			bad = parse_real("--cut-at", optarg, 0.001, 86400, &cfg.cut_at_s);
			break;
		case 'h':
			usage();
			exit(IWT_EXIT_OK);
		default:
			iwt_try_help(PROG);
			return IWT_EXIT_USAGE;
		}
		if (bad)
			return IWT_EXIT_USAGE;
	}
	if (optind < argc) {
		iwt_usage_err(PROG, "unexpected argument '%s'", argv[optind]);
		return IWT_EXIT_USAGE;
	}
	if (!strcmp(cfg.dev[0], cfg.dev[1]) &&
	    (!cfg.ns[0] || !cfg.ns[1] || !strcmp(cfg.ns[0], cfg.ns[1]))) {
		iwt_usage_err(PROG, "both devices would be %s in the same namespace", cfg.dev[0]);
		return IWT_EXIT_USAGE;
	}
	if (!burst_set) {
		double two_ms = cfg.rate_bps / 8.0 * 0.002;

		cfg.burst = two_ms > cfg.mtu ? (uint64_t)two_ms : cfg.mtu;
	}
	if (!seed_set) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		cfg.seed = ((uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^
			    ((uint64_t)getpid() << 20)) %
			   1000000000u;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Main loop                                                               */
/* ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct pollfd pfd[3];
	sigset_t sigs;
	int home, fd[2], sfd, i, rc;
	pid_t parent = getppid();
	uint64_t cut_at;

	rc = parse_args(argc, argv);
	if (rc)
		return rc;
	setvbuf(stderr, NULL, _IOLBF, 0);
	fprintf(stderr, PROG ": seed %" PRIu64 "\n", cfg.seed);

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) ||
	    (sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		iwt_msg(PROG, "signalfd: %s", strerror(errno));
		return IWT_EXIT_FAIL;
	}
	if (cfg.exit_with_parent) {
		/* the parent may have gone before prctl: check after it */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent) {
			iwt_msg(PROG, "the parent is gone");
			return IWT_EXIT_FAIL;
		}
	}

	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0) {
		iwt_msg(PROG, "/proc/self/ns/net: %s", strerror(errno));
		return IWT_EXIT_FAIL;
	}
	for (i = 0; i < 2; i++) {
		fd[i] = tun_open(cfg.ns[i], cfg.dev[i], home);
		if (fd[i] < 0)
			return IWT_EXIT_FAIL;
	}
	close(home);

	for (i = 0; i < 2; i++) {
		struct iwi_dir *d = &dirs[i];
		uint64_t mix = cfg.seed ^ (i ? 0xb2a0b2a0b2a0b2a0ull : 0xa2b0a2b0a2b0a2b0ull);

		d->name = i ? "b2a" : "a2b";
		d->in_fd = fd[i];
		d->out_fd = fd[!i];
		d->impair = cfg.only < 0 || cfg.only == i;
		d->rng = rng_next(&mix);
		d->tb_tokens = (double)cfg.burst;
	}
	start_ns = iwt_now_ns();
	cut_at = cfg.cut_at_s > 0 ? start_ns + (uint64_t)(cfg.cut_at_s * 1e9) : 0;
	ready_print();

	pfd[0] = (struct pollfd){.fd = fd[0], .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = fd[1], .events = POLLIN};
	pfd[2] = (struct pollfd){.fd = sfd, .events = POLLIN};
	for (;;) {
		uint64_t now = iwt_now_ns(), next = dir_next(&dirs[0]);
		struct timespec ts, *tsp = NULL;
		int n;

		if (dir_next(&dirs[1]) < next)
			next = dir_next(&dirs[1]);
		if (cut_at && cut_at <= now) {
			cut_at = 0;
			cut_set(true);
		}
		if (cut_at && cut_at < next)
			next = cut_at;
		if (next != UINT64_MAX) {
			uint64_t wait = next > now ? next - now : 0;

			ts.tv_sec = (time_t)(wait / 1000000000u);
			ts.tv_nsec = (long)(wait % 1000000000u);
			tsp = &ts;
		}
		n = ppoll(pfd, 3, tsp, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			iwt_msg(PROG, "ppoll: %s", strerror(errno));
			rc = IWT_EXIT_FAIL;
			break;
		}
		if (pfd[2].revents & POLLIN) {
			struct signalfd_siginfo si;
			bool quit = false;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGUSR1)
					stats_print("stats");
				else if (si.ssi_signo == SIGUSR2)
					cut_set(!wire_cut);
				else
					quit = true;
			}
			if (quit)
				break;
		}
		for (i = 0; i < 2; i++) {
			if (pfd[i].revents & (POLLERR | POLLHUP | POLLNVAL)) {
				iwt_msg(PROG, "%s: device error", dirs[i].name);
				rc = IWT_EXIT_FAIL;
			} else if ((pfd[i].revents & POLLIN) && dir_read(&dirs[i])) {
				rc = IWT_EXIT_FAIL;
			}
		}
		if (rc)
			break;
		now = iwt_now_ns();
		dir_run(&dirs[0], now);
		dir_run(&dirs[1], now);
	}
	stats_print("exit");
	for (i = 0; i < 2; i++) {
		dir_flush(&dirs[i]);
		close(fd[i]);
	}
	close(sfd);
	return rc;
}
