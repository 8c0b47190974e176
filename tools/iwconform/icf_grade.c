/* SPDX-License-Identifier: MIT */
/*
 * icf_grade.c - iwconform's grading rule (icf.h).  Sans-I/O.
 *
 * A case expects one reaction.  The RFCs say how a peer answers a
 * violation: a malformed startup frame closes TCP (RFC 5044 §7.1.2), an
 * unacceptable but well-formed one is rejected with R = 1, an error in full
 * operation is reported with one Terminate carrying the layer, type and code
 * of RFC 5040 §4.8 / RFC 5041 §7.2 / RFC 5044 §8 and the header copies of
 * RFC 5040 figure 10, after which the stream is torn down (RFC 5040 §5.4).
 * Strict grading checks all of it to the bit; lenient grading accepts any
 * clean death of the connection as long as the peer did not carry on as if
 * the violation had been accepted.
 *
 * As server (-s) the peer is the MPA Initiator: a Reply it cannot take
 * (malformed, a reject) must close the connection (RFC 5044 §7.1.2 rule 3),
 * a negotiation it cannot meet (RFC 6581 §9.1, §9.2) is reported in a
 * Terminate or by a close, and where the RFC lets it either go on or close
 * (a revision 1 Reply, Markers asked of it) either is right - but a client
 * that went on part of the way and then closed did neither.
 */
#include <stdio.h>
#include <string.h>

#include "icf.h"

const char *icf_grade_name(enum icf_grade g)
{
	switch (g) {
	case ICF_PASS_STRICT:
		return "pass-strict";
	case ICF_PASS_LENIENT:
		return "pass-lenient";
	case ICF_FAIL:
		return "fail";
	case ICF_SKIPPED:
		return "skipped";
	}
	return "?";
}

static size_t code_str(const struct iw_term_code *c, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%u/%u/0x%02x", c->layer, c->etype, c->ecode);

	return n < 0 ? 0 : (size_t)n;
}

void icf_expect_str(const struct icf_expect *e, char *buf, size_t len)
{
	size_t n = 0;
	char code[24];

	buf[0] = '\0';
	switch (e->kind) {
	case ICF_EXP_ACCEPT:
		snprintf(buf, len, "accepted");
		return;
	case ICF_EXP_REJECT:
		snprintf(buf, len, "reject (R=1)");
		return;
	case ICF_EXP_CLOSE:
		snprintf(buf, len, "close");
		return;
	case ICF_EXP_ACCEPT_OR_REJECT:
		snprintf(buf, len, "accept or reject");
		return;
	case ICF_EXP_ACCEPT_OR_CLOSE:
		snprintf(buf, len, "go on or close");
		return;
	case ICF_EXP_TERM:
		break;
	}
	n = (size_t)snprintf(buf, len, "Term ");
	for (unsigned i = 0; i < e->ncodes && n < len; i++) {
		code_str(&e->codes[i], code, sizeof(code));
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "|" : "", code);
	}
	if (n < len && e->copy != ICF_COPY_NONE)
		n += (size_t)snprintf(buf + n, len - n, e->copy == ICF_COPY_RREQ ? " +DR" : " +D");
	if (n < len && e->close_ok)
		n += (size_t)snprintf(buf + n, len - n, " or close");
	if (n < len && e->accept_ok)
		snprintf(buf + n, len - n, " or go on");
}

static const struct rdmap_term *obs_term(const struct icf_obs *o)
{
	return o->tm.use_siw ? &o->tm.siw : &o->tm.std;
}

void icf_obs_str(const struct icf_obs *o, char *buf, size_t len)
{
	char code[24];
	const struct rdmap_term *t;

	if (o->skipped) {
		snprintf(buf, len, "skipped");
		return;
	}
	if (!o->connected) {
		snprintf(buf, len, "no connection");
		return;
	}
	if (o->term) {
		t = obs_term(o);
		code_str(&t->code, code, sizeof(code));
		snprintf(buf, len, "Term %s%s%s%s%s%s", code, t->m || t->d || t->r ? " " : "",
			 t->m ? "M" : "", t->d ? "D" : "", t->r ? "R" : "",
			 o->tm.use_siw ? " (siw layout)" : "");
		return;
	}
	if (o->carried_on) {
		snprintf(buf, len, "carried on");
		return;
	}
	if (o->reply && o->reject) {
		snprintf(buf, len, "reject%s", o->closed ? ", closed" : "");
		return;
	}
	if (o->accepted) {
		snprintf(buf, len, "accepted");
		return;
	}
	if (o->reply_bad) {
		snprintf(buf, len, "bad Reply%s", o->closed ? ", closed" : "");
		return;
	}
	if (o->closed) {
		snprintf(buf, len, o->reset ? "reset" : "closed");
		return;
	}
	snprintf(buf, len, "no reaction");
}

static bool code_eq(const struct iw_term_code *a, const struct iw_term_code *b)
{
	return a->layer == b->layer && a->etype == b->etype && a->ecode == b->ecode;
}

/* The copies a Terminate carries against what was sent: NULL if right,
 * else what is wrong. */
static const char *copies_wrong(const struct icf_expect *e, const struct icf_obs *o)
{
	const struct rdmap_term *t = obs_term(o);

	if (e->copy == ICF_COPY_NONE)
		return NULL;
	if (!t->d)
		return "no DDP header copied (D=0)";
	if (!t->m)
		return "M=0 with the header copied";
	if (t->ddp_hdr_len != o->sent_ddp_len ||
	    memcmp(t->ddp_hdr, o->sent_ddp, o->sent_ddp_len) != 0)
		return "copied DDP header differs from the one sent";
	if (t->ddp_seg_len != o->sent_seg_len)
		return "DDP Segment Length differs from the segment's";
	if (e->copy == ICF_COPY_RREQ) {
		if (!t->r)
			return "no Read Request header copied (R=0)";
		if (memcmp(t->rreq, o->sent_rreq, RDMAP_READ_REQ_LEN) != 0)
			return "copied Read Request header differs from the one sent";
	}
	return NULL;
}

/* The deviation in words, and the grade. */
#define LENIENT(...) (snprintf(dev, devlen, __VA_ARGS__), ICF_PASS_LENIENT)

static enum icf_grade fail(char *dev, size_t devlen, const char *what)
{
	snprintf(dev, devlen, "%s", what);
	return ICF_FAIL;
}

static enum icf_grade grade_term(const struct icf_expect *e, const struct icf_obs *o, char *dev,
				 size_t devlen)
{
	char want[64], got[24];
	const struct rdmap_term *t = obs_term(o);
	const char *wrong;
	bool match = false;

	if (!o->term) {
		if (e->accept_ok && o->accepted)
			return ICF_PASS_STRICT;
		if (o->closed && e->close_ok && !(e->accept_ok && o->spoke))
			return ICF_PASS_STRICT;
		if (o->closed)
			return LENIENT("%s%s", "closed without Terminate",
				       o->reset ? " (reset)" : "");
		return fail(dev, devlen, "no Terminate and no close within the timeout");
	}
	for (unsigned i = 0; i < e->ncodes; i++)
		match = match || code_eq(&t->code, &e->codes[i]);
	code_str(&t->code, got, sizeof(got));
	icf_expect_str(e, want, sizeof(want));
	if (o->tm.use_siw)
		return LENIENT("Terminate %s in Linux siw's layout (%s expected)", got, want);
	if (!match)
		return LENIENT("Terminate %s where %s expected", got, want);
	wrong = copies_wrong(e, o);
	if (wrong)
		return LENIENT("Terminate %s: %s", got, wrong);
	if (o->after_term)
		return LENIENT("Terminate %s, then %s", got,
			       "more messages (RFC 5040 §5.4: it is the last)");
	if (!o->closed)
		return LENIENT("Terminate %s but %s", got, "the connection was not closed");
	return ICF_PASS_STRICT;
}

enum icf_grade icf_grade(const struct icf_expect *e, const struct icf_obs *o, char *dev,
			 size_t devlen)
{
	char got[24];

	dev[0] = '\0';
	if (o->skipped) {
		snprintf(dev, devlen, "%s", o->why);
		return ICF_SKIPPED;
	}
	if (!o->connected)
		return fail(dev, devlen, o->why[0] ? o->why : "could not connect");
	if (o->carried_on) {
		snprintf(dev, devlen, "carried on as if accepted: %s", o->carried_what);
		return ICF_FAIL;
	}
	switch (e->kind) {
	case ICF_EXP_ACCEPT:
	case ICF_EXP_ACCEPT_OR_REJECT:
		if (o->accepted && !o->term)
			return ICF_PASS_STRICT;
		if (e->kind == ICF_EXP_ACCEPT_OR_REJECT && o->reply && o->reject)
			return ICF_PASS_STRICT;
		if (o->term) {
			code_str(&obs_term(o)->code, got, sizeof(got));
			snprintf(dev, devlen, "Terminate %s where it should have been accepted",
				 got);
		} else if (o->reply && o->reject) {
			snprintf(dev, devlen, "rejected where it should have been accepted");
		} else if (o->closed) {
			snprintf(dev, devlen, "closed where it should have been accepted");
		} else {
			snprintf(dev, devlen, "%s", o->why[0] ? o->why : "no answer in time");
		}
		return ICF_FAIL;
	case ICF_EXP_REJECT:
		if (o->reply && o->reject)
			return ICF_PASS_STRICT;
		if (o->reply && !o->reject)
			return fail(dev, devlen, "accepted (Reply R=0) where a reject was due");
		if (o->closed)
			return LENIENT("%s%s", "closed without a Reply (R=1 expected)", "");
		return fail(dev, devlen, "no Reply and no close within the timeout");
	case ICF_EXP_CLOSE:
		if (o->reply && !o->reject && !o->full)
			return fail(dev, devlen, "accepted (Reply R=0) where a close was due");
		if (o->reply && o->reject)
			return LENIENT("%s%s", "rejected (R=1) where RFC 5044 §7.1.2 ",
				       "says close");
		if (o->term)
			return LENIENT("%s%s", "Terminate where a close was due", "");
		if (o->closed)
			return ICF_PASS_STRICT;
		return fail(dev, devlen, "the connection stayed open");
	case ICF_EXP_ACCEPT_OR_CLOSE:
		if (o->accepted && !o->term)
			return ICF_PASS_STRICT;
		if (o->term) {
			code_str(&obs_term(o)->code, got, sizeof(got));
			return LENIENT("Terminate %s where going on or a close was due", got);
		}
		if (o->closed && !o->spoke)
			return ICF_PASS_STRICT;
		if (o->closed) {
			snprintf(dev, devlen, "closed in the middle of the exchange (%s)",
				 o->why[0] ? o->why : "after going on");
			return ICF_FAIL;
		}
		return fail(dev, devlen, o->why[0] ? o->why : "no answer in time");
	case ICF_EXP_TERM:
		if (o->reply && o->reject)
			return LENIENT("%s%s", "rejected at MPA startup", "");
		return grade_term(e, o, dev, devlen);
	}
	return fail(dev, devlen, "bad expectation");
}
