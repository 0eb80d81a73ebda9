// Half-open TCP probes (the `syn` probe mode, docs/health.md "Half-open SYN probes").
//
// A probe is one bare SYN sent from a raw IPv4 socket, in batches with sendmmsg(). The member
// answers SYN-ACK (port open: up) or RST (closed: refused); this host's kernel, which holds no
// socket for the probe, answers the SYN-ACK with an RST, so the member drops its half-open entry.
// No socket, port selection, connection hash entry, epoll registration or disconnect per probe.
//
// Replies: the same raw socket receives every incoming TCP segment of the host; a classic BPF
// filter keeps only SYN-ACK and RST segments to the probe's source port (a TCP port reserved by
// binding a socket to it and never listening, so no other socket of the host uses it and the
// kernel resets every SYN-ACK sent there), cut to their headers. A thread reads them with
// recvmmsg() into a single-producer ring and wakes Node's loop through a uv_async_t, so a busy
// event loop does not overflow the socket's receive buffer; replies carry the kernel's receive
// time (SO_TIMESTAMPNS), so RTTs do not include the time they waited. The loop matches each reply
// to its probe by the SYN's sequence number: a keyed 32-bit permutation of (generation, id), checked
// against the probe's address and port, so an off-path host has to guess 32 bits to forge a reply.
//
// Source address: the TCP checksum covers it, so it is looked up per destination (the address the
// kernel would pick) and written into the IP header, which this code builds itself (IP_HDRINCL:
// the kernel fills in only the length and the header checksum, and skips its IP ID generation);
// it is looked up (connect() of a UDP socket, getsockname()) and cached
// for SRC_TTL_NS; expired entries leave the table when it fills and is rebuilt (src_rehash keeps
// the live ones only), so its size follows the destinations probed within a TTL. The thread
// also listens for address and route changes (rtnetlink) and has the cache emptied on each, so a
// new source address is used from the next probe on.
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
#define IP_LEN 20                // the IPv4 header this code writes (IP_HDRINCL)
#define RX_COALESCE_NS 1000000   // the thread lets replies gather this long after each batch

typedef struct {
  uint32_t saddr;  // member address (network order)
  uint32_t ack;    // host order
  uint64_t t;      // receive time, CLOCK_REALTIME ns
  uint16_t sport;  // member port (network order)
  uint8_t rst;
} reply_t;

typedef struct {
  uint32_t daddr, saddr;
  uint64_t expires;
} src_t;

struct syn_s {
  int raw;           // raw IPv4 TCP socket: sends SYNs, receives filtered replies
  int reserve;       // TCP socket bound to the source port, never listening
  int udp;           // for source address lookups
  int stopfd;        // eventfd: tells the thread to exit
  int nl;            // rtnetlink: address and route changes (-1 when unavailable)
  _Atomic int src_stale;  // set by the thread on a change: the loop empties the cache
  uint16_t sport;    // network order
  uint32_t key[4];   // cookie key
  pthread_t thread;
  uv_async_t *async;
  reply_t *ring;
  _Atomic uint32_t head, tail;
  _Atomic uint32_t drops;
  uint32_t fallbacks;
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
static uint32_t src_slot(uint32_t daddr, uint32_t cap) {
  uint32_t h = daddr;  // murmur3's finalizer: every input bit reaches the low bits the mask keeps
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
    uint32_t j = src_slot(e->daddr, cap);
    while (t[j].daddr) j = (j + 1) & (cap - 1);
    t[j] = *e;
  }
  free(y->src);
  y->src = t;
  y->src_cap = cap;
  y->src_n = live;
  return 0;
}

/** The source address the kernel uses towards `daddr`, from the cache or a route lookup. */
static int src_lookup(syn_t *y, uint32_t daddr, uint64_t now, uint32_t *saddr) {
  if (atomic_exchange_explicit(&y->src_stale, 0, memory_order_acquire)) {
    memset(y->src, 0, (size_t)y->src_cap * sizeof *y->src);  // an address or route changed
    y->src_n = 0;
  }
  uint32_t j = src_slot(daddr, y->src_cap);
  while (y->src[j].daddr && y->src[j].daddr != daddr) j = (j + 1) & (y->src_cap - 1);
  src_t *e = &y->src[j];
  if (e->daddr == daddr && e->expires > now) {
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
  if (e->daddr != daddr) {
    if ((y->src_n + 1) * 2 > y->src_cap) {
      if (src_rehash(y, now) != 0) return 0;  // out of memory: uncached this time
      j = src_slot(daddr, y->src_cap);
      while (y->src[j].daddr) j = (j + 1) & (y->src_cap - 1);
      e = &y->src[j];
    }
    y->src_n++;
  }
  e->daddr = daddr;
  e->saddr = *saddr;
  e->expires = now + SRC_TTL_NS;
  return 0;
}

// ---- receiving ----------------------------------------------------------------------------------
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
        memcpy(&r.sport, tcp, 2);
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
        uint32_t h = atomic_load_explicit(&y->head, memory_order_relaxed);
        if (h - atomic_load_explicit(&y->tail, memory_order_acquire) >= RING) {
          atomic_fetch_add_explicit(&y->drops, 1, memory_order_relaxed);
          continue;
        }
        y->ring[h & (RING - 1)] = r;
        atomic_store_explicit(&y->head, h + 1, memory_order_release);
      }
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
    if (id >= s->cap) continue;
    probe_t *p = &s->table[id];
    if (p->fd != FD_SYN || (p->gen & 0xff) != (v >> 24) || p->daddr != r.saddr || p->dport != r.sport) continue;
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
  while (off < y->n) {
    int m = sendmmsg(y->raw, &y->msg[off], y->n - off, 0);
    if (m > 0) {
      off += (uint32_t)m;
      continue;
    }
    int err = m < 0 ? errno : EIO;
    if (err == EINTR) continue;
    uint32_t id = y->ids[off];
    unqueue(s, id);
    int rc = err;
    if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
      // the raw socket's send buffer is full: this probe takes the connect() path instead
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
  uint32_t saddr = 0;
  int rc = src_lookup(y, daddr, t, &saddr);
  if (rc != 0) return rc;
  if (y->n == CHUNK) send_chunk(y);
  probe_t *p = &s->table[id];
  p->gen++;
  p->err = 0;
  p->fd = FD_SYN;
  p->daddr = daddr;
  p->dport = dport;
  p->fam = 0;
  s->inflight++;
  uint32_t seq = cookie_enc(y->key, ((p->gen & 0xff) << 24) | id);
  uint32_t i = y->n++;
  uint8_t *ip = y->pkt[i];
  memset(ip, 0, IP_LEN + SYN_LEN);
  ip[0] = 0x45;  // IPv4, 5 words; total length and header checksum: filled in by the kernel
  ip[4] = (uint8_t)(seq >> 8);  // a non-zero ID, so the kernel does not generate one (DF is set)
  ip[5] = (uint8_t)seq | 1;
  ip[6] = 0x40;  // DF
  ip[8] = 64;    // TTL
  ip[9] = IPPROTO_TCP;
  memcpy(ip + 12, &saddr, 4);
  memcpy(ip + 16, &daddr, 4);
  uint8_t *k = ip + IP_LEN;
  memcpy(k, &y->sport, 2);
  memcpy(k + 2, &dport, 2);
  uint32_t nseq = htonl(seq);
  memcpy(k + 4, &nseq, 4);
  k[12] = (SYN_LEN / 4) << 4;
  k[13] = 0x02;  // SYN
  k[14] = 0xfa;  // window 64240
  k[15] = 0xf0;
  k[20] = 2;     // MSS 1460
  k[21] = 4;
  k[22] = 0x05;
  k[23] = 0xb4;
  const uint8_t *sa = (const uint8_t *)&saddr, *da = (const uint8_t *)&daddr;
  uint32_t sum = sum16(sa, 4, 0);
  sum = sum16(da, 4, sum);
  sum += IPPROTO_TCP + SYN_LEN;
  sum = sum16(k, SYN_LEN, sum);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  uint16_t ck = (uint16_t)~sum;
  k[16] = (uint8_t)(ck >> 8);
  k[17] = (uint8_t)ck;
  memset(&y->dst[i], 0, sizeof y->dst[i]);
  y->dst[i].sin_family = AF_INET;
  y->dst[i].sin_addr.s_addr = daddr;
  y->iov[i].iov_base = ip;
  y->iov[i].iov_len = IP_LEN + SYN_LEN;
  memset(&y->msg[i], 0, sizeof y->msg[i]);
  y->msg[i].msg_hdr.msg_name = &y->dst[i];
  y->msg[i].msg_hdr.msg_namelen = sizeof y->dst[i];
  y->msg[i].msg_hdr.msg_iov = &y->iov[i];
  y->msg[i].msg_hdr.msg_iovlen = 1;
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
static void on_async_closed(uv_handle_t *h) { free(h); }

static void close_fds(syn_t *y) {
  if (y->raw >= 0) close(y->raw);
  if (y->reserve >= 0) close(y->reserve);
  if (y->udp >= 0) close(y->udp);
  if (y->stopfd >= 0) close(y->stopfd);
  if (y->nl >= 0) close(y->nl);
}

int syn_enable(state_t *s) {
  syn_t *y = calloc(1, sizeof *y);
  if (!y) return ENOMEM;
  y->s = s;
  y->reserve = y->udp = y->stopfd = y->nl = -1;
  y->raw = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  int rc = 0;
  if (y->raw < 0) rc = errno;
  // the source port: bound, never listening, so the kernel resets every SYN-ACK sent to it
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  socklen_t alen = sizeof a;
  if (!rc && ((y->reserve = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 || bind(y->reserve, (struct sockaddr *)&a, sizeof a) < 0 ||
              getsockname(y->reserve, (struct sockaddr *)&a, &alen) < 0))
    rc = errno;
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
    y->sport = a.sin_port;
    uint16_t port = ntohs(a.sin_port);
    struct sock_filter code[] = {
        {BPF_LDX | BPF_B | BPF_MSH, 0, 0, 0},     // X = IP header length
        {BPF_LD | BPF_H | BPF_IND, 0, 0, 2},      // TCP destination port
        {BPF_JMP | BPF_JEQ | BPF_K, 0, 5, port},
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

void syn_stats(state_t *s, uint32_t out[3]) {
  syn_t *y = s->syn;
  out[0] = ntohs(y->sport);
  out[1] = atomic_load_explicit(&y->drops, memory_order_relaxed);
  out[2] = y->fallbacks;
}
