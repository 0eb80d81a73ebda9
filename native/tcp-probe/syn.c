// Half-open TCP probes (the `syn` probe mode, docs/health.md "Half-open SYN probes").
//
// A probe is one bare SYN sent from a raw IPv4 socket, in batches with sendmmsg(). The member
// answers SYN-ACK (port open: up) or RST (closed: refused); the receiver thread answers each
// SYN-ACK with an RST (see rst_add), so the member drops its half-open entry. No socket, port
// selection, connection hash entry, epoll registration or disconnect per probe.
//
// Source ports: NPORTS consecutive TCP ports, each held by a socket that listens with a socket
// filter dropping everything, so no other socket of the host uses them and the kernel neither
// answers nor resets what arrives there. Consecutive probes of one address and port take them in
// turn (a counter kept with the destination's cached source address), so each probe of a member
// has a 4-tuple the previous ones did not use: a half-open entry that outlived its probe (its
// RST lost) would answer a new SYN on its 4-tuple with a bare ACK (tcp_check_req: the sequence
// number is out of its window) and drop it, and that probe would time out; on another 4-tuple
// the entry costs nothing until the member's SYN-ACK retransmission, which gets an RST again.
//
// Replies: the same raw socket receives every incoming TCP segment of the host; a classic BPF
// filter keeps only SYN-ACK and RST segments to the source ports, cut to their headers. A thread
// reads them with recvmmsg() into a single-producer ring and wakes Node's loop through a
// uv_async_t, so a busy event loop does not overflow the socket's receive buffer; replies carry
// the kernel's receive time (SO_TIMESTAMPNS), so RTTs do not include the time they waited. The
// loop matches each reply to its probe by the SYN's sequence number: a keyed 32-bit permutation
// of (generation, id), checked against the probe's addresses and ports, so an off-path host has
// to guess 32 bits to forge a reply.
//
// Source address: the TCP checksum covers it, so it is looked up per destination (the address the
// kernel would pick) and written into the IP header, which this code builds itself (IP_HDRINCL:
// the kernel fills in only the length and the header checksum, and skips its IP ID generation);
// it is looked up (connect() of a UDP socket, getsockname()) and cached per destination address
// and port for SRC_TTL_NS; expired entries leave the table when it fills and is rebuilt
// (src_rehash keeps the live ones only), so its size follows the destinations probed within a
// TTL. The thread also listens for address and route changes (rtnetlink) and has the cache
// emptied on each, so a new source address is used from the next probe on.
#define _GNU_SOURCE
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 1024               // SYNs per sendmmsg (UIO_MAXIOV)
#define RING (1u << 17)          // replies buffered between the thread and the loop
#define RXB 256                  // replies per recvmmsg
#define SNAP 96                  // bytes kept of each reply: IP header (max 60) + TCP header start
#define SRC_TTL_NS (60ull * 1000000000ull)
#define SYN_LEN 24               // TCP header with an MSS option
#define RST_LEN 20               // TCP header alone
#define RSTQ RXB                 // RSTs per sendmmsg: one per SYN-ACK of a recvmmsg
#define RST_WAIT_MS 10           // how long the thread waits for room in the RST socket's buffer
#define SEND_WAIT_MS 20          // how long a chunk of SYNs waits for room in the send buffer
#define IP_LEN 20                // the IPv4 header this code writes (IP_HDRINCL)
#define RX_COALESCE_NS 1000000   // the thread lets replies gather this long after each batch
#define NPORTS 16                // source ports, consecutive; a destination's probes take them in turn
#define PORT_TRIES 64            // attempts at finding NPORTS free consecutive ports

typedef struct {
  uint32_t saddr;  // member address (network order)
  uint32_t daddr;  // our address (network order)
  uint32_t ack;    // host order
  uint64_t t;      // receive time, CLOCK_REALTIME ns
  uint16_t sport;  // member port (network order)
  uint16_t dport;  // our source port (network order)
  uint8_t rst;
} reply_t;

typedef struct {
  uint32_t daddr;    // destination (network order; 0: empty slot)
  uint16_t dport;    // destination port (network order)
  uint16_t turn;     // probes sent to it: selects the next one's source port
  uint32_t saddr;    // source address towards it
  uint64_t expires;  // of saddr
} src_t;

struct syn_s {
  int raw;           // raw IPv4 TCP socket: sends SYNs, receives filtered replies
  int rawrst;        // raw IPv4 socket (IPPROTO_RAW: send only) for the thread's RSTs
  int reserve[NPORTS];  // TCP sockets holding the source ports: listening, every segment filtered out
  int udp;           // for source address lookups
  int stopfd;        // eventfd: tells the thread to exit
  int nl;            // rtnetlink: address and route changes (-1 when unavailable)
  _Atomic int src_stale;  // set by the thread on a change: the loop empties the cache
  uint16_t sport;    // the first source port (host order); the others follow it
  uint32_t key[4];   // cookie key
  pthread_t thread;
  uv_async_t *async;
  reply_t *ring;
  _Atomic uint32_t head, tail;
  _Atomic uint32_t drops;
  uint32_t fallbacks;
  uint32_t send_waits;  // chunks of SYNs that waited for room in the send buffer
  uint32_t unmatched;  // replies for no probe in flight: late (after a timeout or cancel) or stray
  _Atomic uint32_t rsts;       // RSTs the thread sent for SYN-ACKs
  _Atomic uint32_t rst_fails;  // RSTs the send buffer did not take
  // the thread's RSTs waiting for sendmmsg
  uint32_t nrst;
  uint8_t rpkt[RSTQ][IP_LEN + RST_LEN];
  struct sockaddr_in rdst[RSTQ];
  struct iovec riov[RSTQ];
  struct mmsghdr rmsg[RSTQ];
  // source cache (open addressing, daddr 0 = empty)
  src_t *src;
  uint32_t src_cap, src_n;
  // SYNs waiting for sendmmsg
  uint32_t n;
  uint8_t pkt[CHUNK][IP_LEN + SYN_LEN];
  struct sockaddr_in dst[CHUNK];
  struct iovec iov[CHUNK];
  struct mmsghdr msg[CHUNK];
  uint32_t ids[CHUNK];
  int entries[CHUNK];  // start-queue entry of each SYN, for its errno
  int fails;
  state_t *s;
};

// ---- cookie: a 4-round Feistel permutation of 32 bits ------------------------------------------
static uint16_t round_f(uint16_t x, uint32_t k) { return (uint16_t)(((uint32_t)(x ^ (k & 0xffff)) * 0x9E3779B1u + k) >> 16); }

static uint32_t cookie_enc(const uint32_t k[4], uint32_t v) {
  uint16_t l = (uint16_t)(v >> 16), r = (uint16_t)v;
  for (int i = 0; i < 4; i++) {
    uint16_t t = l ^ round_f(r, k[i]);
    l = r;
    r = t;
  }
  return ((uint32_t)l << 16) | r;
}

static uint32_t cookie_dec(const uint32_t k[4], uint32_t c) {
  uint16_t l = (uint16_t)(c >> 16), r = (uint16_t)c;
  for (int i = 3; i >= 0; i--) {
    uint16_t t = r ^ round_f(l, k[i]);
    r = l;
    l = t;
  }
  return ((uint32_t)l << 16) | r;
}

// ---- source addresses ---------------------------------------------------------------------------
static uint32_t src_slot(uint32_t daddr, uint16_t dport, uint32_t cap) {
  uint32_t h = daddr ^ ((uint32_t)dport * 0x9E3779B1u);  // murmur3's finalizer: every input bit reaches the low bits the mask keeps
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h & (cap - 1);
}

/** Rebuilds the cache with room for its live entries; expired ones are dropped. */
static int src_rehash(syn_t *y, uint64_t now) {
  uint32_t live = 0;
  for (uint32_t i = 0; i < y->src_cap; i++)
    if (y->src[i].daddr && y->src[i].expires > now) live++;
  uint32_t cap = 1024;
  while (cap < live * 4) cap *= 2;
  src_t *t = calloc(cap, sizeof *t);
  if (!t) return ENOMEM;
  for (uint32_t i = 0; i < y->src_cap; i++) {
    src_t *e = &y->src[i];
    if (!e->daddr || e->expires <= now) continue;
    uint32_t j = src_slot(e->daddr, e->dport, cap);
    while (t[j].daddr) j = (j + 1) & (cap - 1);
    t[j] = *e;
  }
  free(y->src);
  y->src = t;
  y->src_cap = cap;
  y->src_n = live;
  return 0;
}

/** The source address the kernel uses towards `daddr`, from the cache or a route lookup, and the
 *  number of probes sent to `daddr`:`dport` before (0 when not cached). */
static int src_lookup(syn_t *y, uint32_t daddr, uint16_t dport, uint64_t now, uint32_t *saddr, uint32_t *turn) {
  *turn = 0;
  if (atomic_exchange_explicit(&y->src_stale, 0, memory_order_acquire)) {
    memset(y->src, 0, (size_t)y->src_cap * sizeof *y->src);  // an address or route changed
    y->src_n = 0;
  }
  uint32_t j = src_slot(daddr, dport, y->src_cap);
  while (y->src[j].daddr && (y->src[j].daddr != daddr || y->src[j].dport != dport)) j = (j + 1) & (y->src_cap - 1);
  src_t *e = &y->src[j];
  int found = e->daddr == daddr && e->dport == dport;
  if (found) *turn = e->turn++;
  if (found && e->expires > now) {
    *saddr = e->saddr;
    return 0;
  }
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  // disconnect first: a UDP socket keeps the source address of its first connect()
  a.sin_family = AF_UNSPEC;
  connect(y->udp, (struct sockaddr *)&a, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(9);
  a.sin_addr.s_addr = daddr;
  if (connect(y->udp, (struct sockaddr *)&a, sizeof a) < 0) return errno;
  socklen_t len = sizeof a;
  if (getsockname(y->udp, (struct sockaddr *)&a, &len) < 0) return errno;
  *saddr = a.sin_addr.s_addr;
  if (daddr == 0) return 0;  // never cached: 0 marks empty slots
  if (!found) {
    if ((y->src_n + 1) * 2 > y->src_cap) {
      if (src_rehash(y, now) != 0) return 0;  // out of memory: uncached this time
      j = src_slot(daddr, dport, y->src_cap);
      while (y->src[j].daddr) j = (j + 1) & (y->src_cap - 1);
      e = &y->src[j];
    }
    y->src_n++;
    e->turn = 1;
  }
  e->daddr = daddr;
  e->dport = dport;
  e->saddr = *saddr;
  e->expires = now + SRC_TTL_NS;
  return 0;
}

// ---- receiving ----------------------------------------------------------------------------------
static void rst_add(syn_t *y, const reply_t *r);
static void rst_send(syn_t *y);

static void *rx_main(void *arg) {
  syn_t *y = arg;
  struct mmsghdr msgs[RXB];
  struct iovec iov[RXB];
  uint8_t bufs[RXB][SNAP];
  char ctl[RXB][CMSG_SPACE(sizeof(struct timespec))];
  for (;;) {
    struct pollfd p[3] = {{y->raw, POLLIN, 0}, {y->stopfd, POLLIN, 0}, {y->nl, POLLIN, 0}};
    if (poll(p, y->nl >= 0 ? 3 : 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[1].revents) break;
    if (y->nl >= 0 && p[2].revents) {
      // what changed does not matter: every cached source is looked up again
      char nlbuf[8192];
      while (recv(y->nl, nlbuf, sizeof nlbuf, MSG_DONTWAIT) > 0) {}
      atomic_store_explicit(&y->src_stale, 1, memory_order_release);
    }
    int got = 0;
    for (;;) {
      for (int i = 0; i < RXB; i++) {
        iov[i].iov_base = bufs[i];
        iov[i].iov_len = SNAP;
        memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_control = ctl[i];
        msgs[i].msg_hdr.msg_controllen = sizeof ctl[i];
      }
      int m = recvmmsg(y->raw, msgs, RXB, MSG_DONTWAIT, NULL);
      if (m <= 0) break;
      for (int i = 0; i < m; i++) {
        const uint8_t *ip = bufs[i];
        uint32_t len = msgs[i].msg_len < SNAP ? msgs[i].msg_len : SNAP;
        if (len < 20 || (ip[0] >> 4) != 4) continue;
        uint32_t ihl = (uint32_t)(ip[0] & 15) * 4;
        if (ihl < 20 || len < ihl + 14) continue;
        const uint8_t *tcp = ip + ihl;
        uint8_t flags = tcp[13];
        reply_t r;
        r.rst = (flags & 0x04) ? 1 : 0;
        if (!r.rst && (flags & 0x12) != 0x12) continue;
        memcpy(&r.saddr, ip + 12, 4);
        memcpy(&r.daddr, ip + 16, 4);
        memcpy(&r.sport, tcp, 2);
        memcpy(&r.dport, tcp + 2, 2);
        uint32_t ack;
        memcpy(&ack, tcp + 8, 4);
        r.ack = ntohl(ack);
        r.t = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
          if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof ts);
            r.t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
          }
        }
        if (!r.t) r.t = real_ns();
        if (!r.rst) rst_add(y, &r);
        uint32_t h = atomic_load_explicit(&y->head, memory_order_relaxed);
        if (h - atomic_load_explicit(&y->tail, memory_order_acquire) >= RING) {
          atomic_fetch_add_explicit(&y->drops, 1, memory_order_relaxed);
          continue;
        }
        y->ring[h & (RING - 1)] = r;
        atomic_store_explicit(&y->head, h + 1, memory_order_release);
      }
      rst_send(y);
      got += m;
      if (m < RXB) break;
    }
    if (got) uv_async_send(y->async);
    struct timespec d = {0, RX_COALESCE_NS};
    nanosleep(&d, NULL);
  }
  return NULL;
}

/** On Node's loop: matches the buffered replies to their probes. */
static void on_async(uv_async_t *h) {
  state_t *s = (state_t *)h->data;
  syn_t *y = s->syn;
  if (s->closing || !y) return;
  uint32_t t = atomic_load_explicit(&y->tail, memory_order_relaxed);
  uint32_t head = atomic_load_explicit(&y->head, memory_order_acquire);
  while (t != head) {
    reply_t r = y->ring[t & (RING - 1)];
    atomic_store_explicit(&y->tail, ++t, memory_order_release);
    uint32_t v = cookie_dec(y->key, r.ack - 1);
    uint32_t id = v & (MAX_ID - 1);
    // A flush runs JS, which may cancel or restart ids: the generation and address must match.
    probe_t *p = id < s->cap ? &s->table[id] : NULL;
    if (!p || p->fd != FD_SYN || (p->gen & 0xff) != (v >> 24) || p->daddr != r.saddr || p->dport != r.sport || p->sport != r.dport) {
      y->unmatched++;
      continue;
    }
    probe_finish(s, id, r.rst ? ECONNREFUSED : 0, r.t);
  }
  probe_flush(s);
  probe_update_ref(s);
}

// ---- sending ------------------------------------------------------------------------------------
static uint32_t sum16(const uint8_t *p, int n, uint32_t sum) {
  for (int i = 0; i + 1 < n; i += 2) sum += (uint32_t)((p[i] << 8) | p[i + 1]);
  return sum;
}

/** Writes an IPv4 header and a TCP header (`len` bytes: 20, or 24 with an MSS option) into `ip`,
 *  with the TCP checksum; the kernel fills in the IP length and header checksum (IP_HDRINCL). */
static void build_segment(uint8_t *ip, uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport, uint32_t seq, uint8_t flags, int len) {
  memset(ip, 0, IP_LEN + len);
  ip[0] = 0x45;  // IPv4, 5 words
  ip[4] = (uint8_t)(seq >> 8);  // a non-zero ID, so the kernel does not generate one (DF is set)
  ip[5] = (uint8_t)seq | 1;
  ip[6] = 0x40;  // DF
  ip[8] = 64;    // TTL
  ip[9] = IPPROTO_TCP;
  memcpy(ip + 12, &saddr, 4);
  memcpy(ip + 16, &daddr, 4);
  uint8_t *k = ip + IP_LEN;
  memcpy(k, &sport, 2);
  memcpy(k + 2, &dport, 2);
  uint32_t nseq = htonl(seq);
  memcpy(k + 4, &nseq, 4);
  k[12] = (uint8_t)((len / 4) << 4);
  k[13] = flags;
  if (len == SYN_LEN) {
    k[14] = 0xfa;  // window 64240
    k[15] = 0xf0;
    k[20] = 2;     // MSS 1460
    k[21] = 4;
    k[22] = 0x05;
    k[23] = 0xb4;
  }
  const uint8_t *sa = (const uint8_t *)&saddr, *da = (const uint8_t *)&daddr;
  uint32_t sum = sum16(sa, 4, 0);
  sum = sum16(da, 4, sum);
  sum += IPPROTO_TCP + (uint32_t)len;
  sum = sum16(k, len, sum);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  uint16_t ck = (uint16_t)~sum;
  k[16] = (uint8_t)(ck >> 8);
  k[17] = (uint8_t)ck;
}

static void set_msg(struct mmsghdr *m, struct iovec *iov, struct sockaddr_in *dst, uint8_t *pkt, size_t len, uint32_t daddr) {
  memset(dst, 0, sizeof *dst);
  dst->sin_family = AF_INET;
  dst->sin_addr.s_addr = daddr;
  iov->iov_base = pkt;
  iov->iov_len = len;
  memset(m, 0, sizeof *m);
  m->msg_hdr.msg_name = dst;
  m->msg_hdr.msg_namelen = sizeof *dst;
  m->msg_hdr.msg_iov = iov;
  m->msg_hdr.msg_iovlen = 1;
}

// Resets: the member drops its half-open entry when it receives an RST for it. The kernel would
// send one for every SYN-ACK that reaches a port with no socket, but it sends those (like every
// RST and ACK of TCP's that has no socket) through a per-CPU control socket whose send buffer is
// net.core.wmem_default (208 KiB): while its packets wait in a queue (a veth peer's backlog, a
// busy NIC's ring), the ones beyond it are dropped, counted only in IpOutDiscards. A burst of a
// few hundred SYN-ACKs is enough. So the source ports are listening sockets whose socket filter
// drops every segment (the kernel then neither answers nor resets: tcp_v4_rcv runs a listener's
// filter before anything else), and the receiver thread answers each SYN-ACK it reads with an
// RST of its own (RFC 793: sequence number = the SYN-ACK's acknowledgment number), sent from the
// raw socket of its own (send only), whose send buffer this code sizes and whose failures it
// sees, so RSTs and SYNs do not take each other's room.
static void rst_add(syn_t *y, const reply_t *r) {
  if (y->nrst == RSTQ) rst_send(y);
  uint32_t i = y->nrst++;
  build_segment(y->rpkt[i], r->daddr, r->saddr, r->dport, r->sport, r->ack, 0x04, RST_LEN);
  set_msg(&y->rmsg[i], &y->riov[i], &y->rdst[i], y->rpkt[i], IP_LEN + RST_LEN, r->saddr);
}

/** sendmmsg() of `msgs` [*off, n) on `fd`, advancing *off past what was sent. A full send buffer
 *  is waited on for room once per batch (*waited), up to `wait_ms`. Returns 0 once all are sent,
 *  else the errno that stopped it at *off. */
static int send_all(int fd, struct mmsghdr *msgs, uint32_t n, uint32_t *off, int wait_ms, int *waited) {
  while (*off < n) {
    int m = sendmmsg(fd, &msgs[*off], n - *off, 0);
    if (m > 0) {
      *off += (uint32_t)m;
      continue;
    }
    int err = m < 0 ? errno : EIO;
    if (err == EINTR) continue;
    if ((err == EAGAIN || err == EWOULDBLOCK) && !*waited) {
      struct pollfd pw = {fd, POLLOUT, 0};
      poll(&pw, 1, wait_ms);
      *waited = 1;
      continue;
    }
    return err;
  }
  return 0;
}

/** Sends the thread's queued RSTs, waiting up to RST_WAIT_MS for room; the rest are counted and
 *  dropped (the member retransmits its SYN-ACK after about 1 s and gets another RST then). */
static void rst_send(syn_t *y) {
  uint32_t off = 0;
  int waited = 0;
  send_all(y->rawrst, y->rmsg, y->nrst, &off, RST_WAIT_MS, &waited);
  atomic_fetch_add_explicit(&y->rsts, off, memory_order_relaxed);
  if (off < y->nrst) atomic_fetch_add_explicit(&y->rst_fails, y->nrst - off, memory_order_relaxed);
  y->nrst = 0;
}

/** Takes back a SYN that was not sent: its slot is free again, without a result. */
static void unqueue(state_t *s, uint32_t id) {
  probe_t *p = &s->table[id];
  p->fd = FD_FREE;
  p->gen++;
  s->inflight--;
}

static void send_chunk(syn_t *y) {
  state_t *s = y->s;
  uint32_t off = 0;
  int waited = 0;
  while (off < y->n) {
    // A full send buffer (SYNs still queued on their way: a burst after a stalled loop) is waited
    // on for room once, briefly, rather than the rest turned into connect()s, which cost several
    // times more and can run the process out of descriptors.
    int had_waited = waited;
    int err = send_all(y->raw, y->msg, y->n, &off, SEND_WAIT_MS, &waited);
    if (waited && !had_waited) y->send_waits++;
    if (err == 0) break;
    uint32_t id = y->ids[off];
    unqueue(s, id);
    int rc = err;
    if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
      // the raw socket's send buffer is still full: this probe takes the connect() path instead
      y->fallbacks++;
      int32_t *e = &s->queue[y->entries[off] * QW];
      uint8_t addr[4];
      memcpy(addr, &y->dst[off].sin_addr.s_addr, 4);
      rc = connect_start(s, id, 4, addr, (uint16_t)(e[1] & 0xffff));
    }
    if (rc != 0) {
      s->queue[y->entries[off] * QW + 7] = rc;
      y->fails++;
    }
    off++;
  }
  y->n = 0;
}

int syn_add(state_t *s, uint32_t id, uint32_t daddr, uint16_t dport, int entry) {
  syn_t *y = s->syn;
  uint64_t t = real_ns();
  uint32_t saddr = 0, turn = 0;
  int rc = src_lookup(y, daddr, dport, t, &saddr, &turn);
  if (rc != 0) return rc;
  if (y->n == CHUNK) send_chunk(y);
  probe_t *p = &s->table[id];
  p->gen++;
  p->err = 0;
  p->fd = FD_SYN;
  p->daddr = daddr;
  p->dport = dport;
  p->sport = htons((uint16_t)(y->sport + turn % NPORTS));
  p->fam = 0;
  s->inflight++;
  uint32_t seq = cookie_enc(y->key, ((p->gen & 0xff) << 24) | id);
  uint32_t i = y->n++;
  build_segment(y->pkt[i], saddr, daddr, p->sport, dport, seq, 0x02, SYN_LEN);  // SYN
  set_msg(&y->msg[i], &y->iov[i], &y->dst[i], y->pkt[i], IP_LEN + SYN_LEN, daddr);
  y->ids[i] = id;
  y->entries[i] = entry;
  p->t0 = t;
  return 0;
}

int syn_send(state_t *s) {
  syn_t *y = s->syn;
  if (y->n > 0) send_chunk(y);
  int f = y->fails;
  y->fails = 0;
  return f;
}

// ---- setup --------------------------------------------------------------------------------------
/** A TCP socket bound to `port` (host order; 0: any) that listens and takes nothing: no other
 *  socket of the host uses the port, and the kernel drops what arrives there without answering
 *  (see rst_add). -1 with errno set. */
static int bind_port(uint16_t port, uint16_t *got) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  socklen_t alen = sizeof a;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  // listening, with a filter that drops every segment: SYN-ACKs reach this socket and end there
  struct sock_filter drop[] = {{BPF_RET | BPF_K, 0, 0, 0}};
  struct sock_fprog prog = {1, drop};
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) < 0 || listen(fd, 1) < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  *got = ntohs(a.sin_port);
  return fd;
}

/** Reserves NPORTS consecutive source ports: the first one the kernel picks, then the ones after
 *  it; when one of those is taken, all are given back and another start is tried. */
static int reserve_ports(syn_t *y) {
  for (int t = 0; t < PORT_TRIES; t++) {
    uint16_t first = 0, got = 0;
    if ((y->reserve[0] = bind_port(0, &first)) < 0) return errno;
    int n = 1, err = EADDRINUSE;
    if ((uint32_t)first + NPORTS - 1 <= 65535) {
      for (; n < NPORTS; n++)
        if ((y->reserve[n] = bind_port((uint16_t)(first + n), &got)) < 0) {
          err = errno;
          break;
        }
    }
    if (n == NPORTS) {
      y->sport = first;
      return 0;
    }
    for (int i = 0; i < n; i++) {
      close(y->reserve[i]);
      y->reserve[i] = -1;
    }
    if (err != EADDRINUSE) return err;
  }
  return EADDRINUSE;
}

static void on_async_closed(uv_handle_t *h) { free(h); }

static void close_fds(syn_t *y) {
  if (y->raw >= 0) close(y->raw);
  if (y->rawrst >= 0) close(y->rawrst);
  for (int i = 0; i < NPORTS; i++)
    if (y->reserve[i] >= 0) close(y->reserve[i]);
  if (y->udp >= 0) close(y->udp);
  if (y->stopfd >= 0) close(y->stopfd);
  if (y->nl >= 0) close(y->nl);
}

int syn_enable(state_t *s) {
  syn_t *y = calloc(1, sizeof *y);
  if (!y) return ENOMEM;
  y->s = s;
  y->rawrst = y->udp = y->stopfd = y->nl = -1;
  for (int i = 0; i < NPORTS; i++) y->reserve[i] = -1;
  y->raw = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  int rc = 0;
  if (y->raw < 0) rc = errno;
  // IPPROTO_RAW: IP_HDRINCL implied, and no copy of any received packet
  if (!rc && (y->rawrst = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_RAW)) < 0) rc = errno;
  if (!rc) rc = reserve_ports(y);
  if (!rc && (y->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) rc = errno;
  if (!rc && (y->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) rc = errno;
  if (!rc) {
    // optional: without it (no netlink) sources are only refreshed after SRC_TTL_NS
    struct sockaddr_nl nla;
    memset(&nla, 0, sizeof nla);
    nla.nl_family = AF_NETLINK;
    nla.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE;
    y->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    if (y->nl >= 0 && bind(y->nl, (struct sockaddr *)&nla, sizeof nla) < 0) {
      close(y->nl);
      y->nl = -1;
    }
  }
  if (!rc) {
    struct sock_filter code[] = {
        {BPF_LDX | BPF_B | BPF_MSH, 0, 0, 0},     // X = IP header length
        {BPF_LD | BPF_H | BPF_IND, 0, 0, 2},      // TCP destination port: one of ours
        {BPF_JMP | BPF_JGE | BPF_K, 0, 6, y->sport},
        {BPF_JMP | BPF_JGT | BPF_K, 5, 0, (uint32_t)y->sport + NPORTS - 1},
        {BPF_LD | BPF_B | BPF_IND, 0, 0, 13},     // TCP flags
        {BPF_JMP | BPF_JSET | BPF_K, 2, 0, 0x04}, // RST
        {BPF_ALU | BPF_AND | BPF_K, 0, 0, 0x12},
        {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0x12},  // SYN-ACK
        {BPF_RET | BPF_K, 0, 0, SNAP},
        {BPF_RET | BPF_K, 0, 0, 0},
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (setsockopt(y->raw, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) < 0) rc = errno;
  }
  if (!rc) {
    int on = 1, buf = 8 << 20;
    if (setsockopt(y->raw, IPPROTO_IP, IP_HDRINCL, &on, sizeof on) < 0) rc = errno;
    setsockopt(y->raw, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    // FORCE passes net.core.rmem_max/wmem_max with CAP_NET_ADMIN; else the plain option, capped there
    if (setsockopt(y->raw, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) < 0) setsockopt(y->raw, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    if (setsockopt(y->raw, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf) < 0) setsockopt(y->raw, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    if (setsockopt(y->rawrst, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf) < 0) setsockopt(y->rawrst, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    if (getrandom(y->key, sizeof y->key, 0) != sizeof y->key) rc = errno ? errno : EIO;
  }
  if (!rc && !(y->ring = calloc(RING, sizeof *y->ring))) rc = ENOMEM;
  if (!rc && !(y->src = calloc(1024, sizeof *y->src))) rc = ENOMEM;
  if (!rc) y->src_cap = 1024;
  if (!rc && !(y->async = calloc(1, sizeof *y->async))) rc = ENOMEM;
  if (!rc && uv_async_init(s->loop, y->async, on_async) != 0) {
    free(y->async);
    y->async = NULL;
    rc = EIO;
  }
  if (!rc) {
    y->async->data = s;
    uv_unref((uv_handle_t *)y->async);  // the poll handle's reference covers probes in flight
    s->syn = y;
    if ((rc = pthread_create(&y->thread, NULL, rx_main, y)) != 0) {
      s->syn = NULL;
      uv_close((uv_handle_t *)y->async, on_async_closed);
      y->async = NULL;
    }
  }
  if (rc) {
    if (y->async) free(y->async);
    close_fds(y);
    free(y->ring);
    free(y->src);
    free(y);
  }
  return rc;
}

void syn_cleanup(state_t *s) {
  syn_t *y = s->syn;
  if (!y) return;
  uint64_t one = 1;
  while (write(y->stopfd, &one, sizeof one) < 0 && errno == EINTR) {}
  pthread_join(y->thread, NULL);
  s->syn = NULL;
  uv_close((uv_handle_t *)y->async, on_async_closed);
  close_fds(y);
  free(y->ring);
  free(y->src);
  free(y);
}

void syn_stats(state_t *s, uint32_t out[SYN_STATS]) {
  syn_t *y = s->syn;
  out[0] = y->sport;
  out[1] = atomic_load_explicit(&y->drops, memory_order_relaxed);
  out[2] = y->fallbacks;
  out[3] = NPORTS;
  out[4] = y->unmatched;
  out[5] = atomic_load_explicit(&y->rsts, memory_order_relaxed);
  out[6] = atomic_load_explicit(&y->rst_fails, memory_order_relaxed);
  out[7] = y->send_waits;
}
