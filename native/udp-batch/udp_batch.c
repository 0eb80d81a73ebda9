// udp_batch: a UDP socket for the DNS answer path that moves packets in batches.
//
// Why this exists: Node's dgram costs one recvmsg syscall, one JS callback and one sendmsg syscall
// per packet (Node 20 has no recvmmsg/sendmmsg). In `npm run bench:dns` a bare dgram server that
// only patches the ID of a precomputed reply (tests/bench/dns-raw-server.mjs) reaches only ~62 %
// of gdnsd's qps, and gslbd on dgram reached ~37-55 %, with about half of its busy time in the
// native send. gdnsd batches with recvmmsg/sendmmsg; this addon does the same: one recvmmsg fills
// up to BATCH slots of a buffer shared with JS, ONE JS callback answers the whole batch in place,
// and one sendmmsg sends all replies.
//
// Shared memory (one ArrayBuffer created once per socket, offsets exported as constants):
//   [0, BATCH*RX_SLOT)                 received packets, slot i at i*RX_SLOT
//   [TX_OFF, TX_OFF + BATCH*TX_SLOT)   replies written by JS, slot i at TX_OFF + i*TX_SLOT
//   [META_OFF, +BATCH*4 int32)         per slot: rx length, family (4/6), source port, tx length
//   [ADDR_OFF, +BATCH*16 bytes)        per slot: source address bytes (4 or 16)
//   [AGE_OFF, +BATCH int32)            per slot: how long the packet waited in the socket's receive
//                                      queue, in microseconds (kernel receive time, SO_TIMESTAMPNS,
//                                      to the moment recvmmsg returned); -1 when unknown
// An rx length of -1 marks a packet larger than RX_SLOT (dropped; JS skips it). JS sets the tx
// length of a slot to the reply size, 0 for no reply.
//
// The age lets the answer path drop queries that waited longer than a client waits for an answer
// (dns.maxQueryAge, docs/dns.md "Stale queries"): after the event loop was blocked, the receive
// buffer holds seconds of queries whose clients gave up; answering them first only delays the
// fresh ones behind them.
//
// Under load the socket can be read on a timer instead of per wakeup (receive coalescing,
// coalesceUs; see on_tick and docs/dns.md "Receive coalescing"), so one callback answers what
// arrived in the meantime.
//
// No per-packet allocation; nothing here trusts packet contents. Sends that would block are
// dropped and counted (a DNS server may drop under overload; the client retries).
#define _GNU_SOURCE
#include <node_api.h>
#include <uv.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define RX_SLOT 4096
#define TX_SLOT 4096
#define TX_OFF (BATCH * RX_SLOT)
#define META_OFF (TX_OFF + BATCH * TX_SLOT)
#define ADDR_OFF (META_OFF + BATCH * 4 * 4)
#define AGE_OFF (ADDR_OFF + BATCH * 16)
#define MEM_SIZE (AGE_OFF + BATCH * 4)
// Room for one SCM_TIMESTAMPNS control message per received packet.
#define CTRL_SIZE CMSG_SPACE(sizeof(struct timespec))
// Batches handled per wakeup, so other event-loop work is not starved under a flood.
#define MAX_BATCHES_PER_WAKEUP 8

typedef struct {
  uv_poll_t poll;
  int fd;
  int family;
  int polling;
  // Receive coalescing (see on_tick): a timerfd polled by its own handle, or -1 when off.
  uv_poll_t tpoll;
  int tfd;
  int32_t coalesce_us;
  int coalescing;          // 1: the socket is not polled; the timer reads it every coalesce_us
  int handles_open;        // libuv handles not yet closed
  uint64_t last_wake_ns;   // CLOCK_MONOTONIC of the last wakeup by the socket
  int closing;
  int closed;
  int in_callback;
  int teardown;
  napi_async_cleanup_hook_handle cleanup;
  napi_env env;
  napi_ref self;   // the handle object, strong while open
  napi_ref cb;     // onBatch(count)
  napi_ref mem_ref;
  napi_async_context actx;
  unsigned char *mem;
  struct mmsghdr rmsg[BATCH];
  struct iovec riov[BATCH];
  struct sockaddr_storage rname[BATCH];
  // control messages (the kernel receive timestamp), aligned as cmsghdr requires
  union { char buf[CTRL_SIZE]; struct cmsghdr align; } rctrl[BATCH];
  struct mmsghdr smsg[BATCH];
  struct iovec siov[BATCH];
  double received, sent, dropped, truncated, send_errors, batches, ticks;
} ub_t;

#define CHECK(env, call)                                                  \
  do {                                                                    \
    if ((call) != napi_ok) {                                              \
      napi_throw_error((env), NULL, "udp_batch: N-API call failed: " #call); \
      return NULL;                                                        \
    }                                                                     \
  } while (0)

static napi_value throw_errno(napi_env env, const char *what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  char code[32];
  snprintf(code, sizeof code, "E%d", err);
  napi_throw_error(env, code, msg);
  return NULL;
}

static void ub_finalize(napi_env env, void *data, void *hint) {
  (void)env; (void)hint;
  ub_t *u = (ub_t *)data;
  // Only reached once the handle is unreferenced, i.e. after close completed (or at teardown).
  if (!u->closed && u->fd >= 0) { close(u->fd); u->fd = -1; }
  if (!u->closed && u->tfd >= 0) { close(u->tfd); u->tfd = -1; }
  if (u->closed) free(u);
  // If never closed (environment teardown with the poll still registered) the struct is leaked
  // on purpose: libuv may still reference it.
}

// Called once per libuv handle (the socket's, and the timer's when coalescing is on); the rest
// runs after the last one.
static void on_uv_close(uv_handle_t *h) {
  ub_t *u = (ub_t *)h->data;
  if (--u->handles_open > 0) return;
  napi_env env = u->env;
  if (u->fd >= 0) { close(u->fd); u->fd = -1; }
  if (u->tfd >= 0) { close(u->tfd); u->tfd = -1; }
  u->closed = 1;
  // Unregistering the cleanup hook also tells a tearing-down environment that this handle is
  // closed (the addon may be unloaded right after, so the close had to finish first).
  if (u->cleanup) { napi_remove_async_cleanup_hook(u->cleanup); u->cleanup = NULL; }
  // At environment teardown the references go with the environment; touch nothing else of N-API.
  if (u->teardown) return;
  if (u->cb) { napi_delete_reference(env, u->cb); u->cb = NULL; }
  if (u->mem_ref) { napi_delete_reference(env, u->mem_ref); u->mem_ref = NULL; }
  if (u->actx) { napi_async_destroy(env, u->actx); u->actx = NULL; }
  if (u->self) {
    uint32_t n = 0;
    napi_reference_unref(env, u->self, &n);
    napi_delete_reference(env, u->self);
    u->self = NULL;
  }
}

static void start_close(ub_t *u) {
  if (u->closing) return;
  u->closing = 1;
  if (u->polling) { uv_poll_stop(&u->poll); u->polling = 0; }
  uv_close((uv_handle_t *)&u->poll, on_uv_close);
  if (u->tfd >= 0) uv_close((uv_handle_t *)&u->tpoll, on_uv_close);
}

// An environment going away (a worker thread ending) with the socket still open: close the poll
// handle; the environment waits for on_uv_close to remove this hook before it unloads the addon.
// The struct is freed by the finalizer once both have run (or leaked if the finalizer ran first).
static void env_cleanup(napi_async_cleanup_hook_handle handle, void *arg) {
  ub_t *u = (ub_t *)arg;
  u->cleanup = handle;
  u->teardown = 1;
  if (u->closing) return;  // close already under way: on_uv_close removes the hook
  start_close(u);
}

// The queue age of packet i in microseconds from its SCM_TIMESTAMPNS control message, against
// `now` (CLOCK_REALTIME, the clock of the kernel's timestamps), or -1 without one. A negative
// difference (the clock stepped back) counts as 0; ages are capped to fit int32.
static int32_t packet_age_us(ub_t *u, int i, const struct timespec *now) {
  struct msghdr *h = &u->rmsg[i].msg_hdr;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c != NULL; c = CMSG_NXTHDR(h, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    struct timespec ts;
    memcpy(&ts, CMSG_DATA(c), sizeof ts);
    int64_t us = ((int64_t)now->tv_sec - ts.tv_sec) * 1000000 + ((int64_t)now->tv_nsec - ts.tv_nsec) / 1000;
    if (us < 0) return 0;
    return us > INT32_MAX ? INT32_MAX : (int32_t)us;
  }
  return -1;
}

static void fill_meta(ub_t *u, int i) {
  int32_t *meta = (int32_t *)(u->mem + META_OFF) + i * 4;
  unsigned char *addr = u->mem + ADDR_OFF + i * 16;
  struct mmsghdr *m = &u->rmsg[i];
  meta[3] = 0;
  meta[0] = (m->msg_hdr.msg_flags & MSG_TRUNC) ? -1 : (int32_t)m->msg_len;
  if (meta[0] < 0) u->truncated++;
  struct sockaddr_storage *ss = &u->rname[i];
  if (ss->ss_family == AF_INET && m->msg_hdr.msg_namelen >= sizeof(struct sockaddr_in)) {
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    meta[1] = 4;
    meta[2] = ntohs(s4->sin_port);
    memcpy(addr, &s4->sin_addr, 4);
  } else if (ss->ss_family == AF_INET6 && m->msg_hdr.msg_namelen >= sizeof(struct sockaddr_in6)) {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    meta[1] = 6;
    meta[2] = ntohs(s6->sin6_port);
    memcpy(addr, &s6->sin6_addr, 16);
  } else {
    meta[0] = -1; meta[1] = 0; meta[2] = 0;
  }
}

// Sends the replies JS wrote for slots [0, n). Messages that would block are dropped.
static void send_batch(ub_t *u, int n) {
  int32_t *meta = (int32_t *)(u->mem + META_OFF);
  int k = 0;
  for (int i = 0; i < n; i++) {
    int32_t len = meta[i * 4 + 3];
    if (len <= 0 || meta[i * 4] < 0) continue;
    if (len > TX_SLOT) { u->send_errors++; continue; }
    if (meta[i * 4 + 2] == 0) { u->dropped++; continue; }  // source port 0: nowhere to answer
    u->siov[k].iov_base = u->mem + TX_OFF + (size_t)i * TX_SLOT;
    u->siov[k].iov_len = (size_t)len;
    memset(&u->smsg[k], 0, sizeof u->smsg[k]);
    u->smsg[k].msg_hdr.msg_iov = &u->siov[k];
    u->smsg[k].msg_hdr.msg_iovlen = 1;
    u->smsg[k].msg_hdr.msg_name = &u->rname[i];
    u->smsg[k].msg_hdr.msg_namelen = u->rmsg[i].msg_hdr.msg_namelen;
    k++;
  }
  int off = 0;
  int guard = 0;
  while (off < k && guard++ < BATCH + 1) {
    int r = sendmmsg(u->fd, &u->smsg[off], (unsigned)(k - off), MSG_DONTWAIT);
    if (r > 0) { u->sent += r; off += r; continue; }
    if (r < 0 && (errno == EINTR)) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
      u->dropped += k - off;  // socket buffer full: drop the rest of this batch
      break;
    }
    // Another error concerns the first unsent message (unreachable peer, bad address): skip it.
    u->send_errors++;
    off++;
  }
}

// Receives, answers (one JS callback per batch) and sends until the socket is drained or
// MAX_BATCHES_PER_WAKEUP batches were handled. Returns the packets received.
static int drain(ub_t *u) {
  napi_env env = u->env;
  napi_handle_scope scope;
  int total = 0;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return 0;
  for (int b = 0; b < MAX_BATCHES_PER_WAKEUP && !u->closing; b++) {
    for (int i = 0; i < BATCH; i++) {
      u->riov[i].iov_base = u->mem + (size_t)i * RX_SLOT;
      u->riov[i].iov_len = RX_SLOT;
      memset(&u->rmsg[i].msg_hdr, 0, sizeof u->rmsg[i].msg_hdr);
      u->rmsg[i].msg_hdr.msg_iov = &u->riov[i];
      u->rmsg[i].msg_hdr.msg_iovlen = 1;
      u->rmsg[i].msg_hdr.msg_name = &u->rname[i];
      u->rmsg[i].msg_hdr.msg_namelen = sizeof u->rname[i];
      u->rmsg[i].msg_hdr.msg_control = u->rctrl[i].buf;
      u->rmsg[i].msg_hdr.msg_controllen = sizeof u->rctrl[i].buf;
      u->rmsg[i].msg_len = 0;
    }
    int n = recvmmsg(u->fd, u->rmsg, BATCH, MSG_DONTWAIT, NULL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN (drained) or an error: wait for the next wakeup
    u->received += n;
    u->batches++;
    total += n;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int32_t *age = (int32_t *)(u->mem + AGE_OFF);
    for (int i = 0; i < n; i++) {
      fill_meta(u, i);
      age[i] = packet_age_us(u, i, &now);
    }
    napi_value cb, recv, argv[1], result;
    if (napi_get_reference_value(env, u->cb, &cb) != napi_ok || cb == NULL) break;
    if (napi_get_reference_value(env, u->self, &recv) != napi_ok || recv == NULL) break;
    napi_create_int32(env, n, &argv[0]);
    u->in_callback = 1;
    napi_status st = napi_make_callback(env, u->actx, recv, cb, 1, argv, &result);
    u->in_callback = 0;
    if (st == napi_pending_exception) {
      napi_value err;
      napi_get_and_clear_last_exception(env, &err);
      napi_fatal_exception(env, err);
      break;
    }
    if (u->closing) break;
    send_batch(u, n);
    if (n < BATCH) break;  // drained
  }
  napi_close_handle_scope(env, scope);
  return total;
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Receive coalescing, as a NIC moderates its interrupts. At a steady rate a wakeup finds one
// packet or a few, so the fixed cost of a wakeup (the poll, entering JavaScript, the two
// syscalls) is paid about once per query. When two wakeups by the socket come less than
// coalesce_us apart, the socket is no longer polled: a periodic timer reads it every coalesce_us
// instead, so each read takes what arrived in the meantime as one batch. A tick that finds
// fewer than two packets returns to waking per packet. A query waits at most coalesce_us more;
// below the switching rate (one wakeup per coalesce_us) nothing waits at all.
// Arms the periodic timer (us > 0) or disarms it (0). Returns 0, or -1 if the kernel refused.
static int set_timer(ub_t *u, int32_t us) {
  struct itimerspec its;
  memset(&its, 0, sizeof its);
  its.it_value.tv_sec = us / 1000000;
  its.it_value.tv_nsec = (long)(us % 1000000) * 1000;
  its.it_interval = its.it_value;
  return timerfd_settime(u->tfd, 0, &its, NULL);
}

static void on_tick(uv_poll_t *h, int status, int events);

static void on_readable(uv_poll_t *h, int status, int events) {
  ub_t *u = (ub_t *)h->data;
  (void)events;
  if (u->closing || status < 0) return;
  drain(u);
  if (u->coalesce_us <= 0 || u->closing) return;
  uint64_t now = mono_ns();
  uint64_t gap = now - u->last_wake_ns;
  u->last_wake_ns = now;
  if (gap >= (uint64_t)u->coalesce_us * 1000u) return;
  // The socket is left unpolled only once the timer that reads it instead is running.
  if (set_timer(u, u->coalesce_us) != 0) return;
  uv_poll_stop(&u->poll);
  u->polling = 0;
  u->coalescing = 1;
}

static void on_tick(uv_poll_t *h, int status, int events) {
  ub_t *u = (ub_t *)h->data;
  (void)events;
  if (u->closing || status < 0) return;
  uint64_t expirations;
  if (read(u->tfd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations) return;
  if (!u->coalescing) return;  // a tick left over from before the switch back
  u->ticks++;
  int n = drain(u);
  if (u->closing || n >= 2) return;
  // Back to reading per packet; the timer stops only once the socket is polled again.
  if (uv_poll_start(&u->poll, UV_READABLE, on_readable) != 0) return;
  u->polling = 1;
  u->coalescing = 0;
  u->last_wake_ns = mono_ns();
  set_timer(u, 0);
}

static ub_t *unwrap(napi_env env, napi_value obj) {
  void *p = NULL;
  if (napi_unwrap(env, obj, &p) != napi_ok || p == NULL) {
    napi_throw_type_error(env, NULL, "udp_batch: not a socket handle");
    return NULL;
  }
  return (ub_t *)p;
}

// open(address: string, port: number, onBatch: (count) => void, reusePort?: boolean,
//      coalesceUs?: number) -> handle
// handle: { port, family, mem: ArrayBuffer }. With reusePort, SO_REUSEPORT is set before bind so
// several sockets (one per DNS worker thread) share the address and the kernel spreads packets
// over them by source address and port. coalesceUs (0-100000, default 0: off) turns on receive
// coalescing (on_tick).
static napi_value ub_open(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 3) { napi_throw_type_error(env, NULL, "open(address, port, onBatch)"); return NULL; }
  char addr[64];
  size_t alen = 0;
  if (napi_get_value_string_utf8(env, argv[0], addr, sizeof addr, &alen) != napi_ok) {
    napi_throw_type_error(env, NULL, "address must be a string"); return NULL;
  }
  int32_t port = -1;
  if (napi_get_value_int32(env, argv[1], &port) != napi_ok || port < 0 || port > 65535) {
    napi_throw_range_error(env, NULL, "port must be 0-65535"); return NULL;
  }
  napi_valuetype t;
  CHECK(env, napi_typeof(env, argv[2], &t));
  if (t != napi_function) { napi_throw_type_error(env, NULL, "onBatch must be a function"); return NULL; }
  bool reuse = false;
  if (argc >= 4) {
    CHECK(env, napi_typeof(env, argv[3], &t));
    if (t == napi_boolean) CHECK(env, napi_get_value_bool(env, argv[3], &reuse));
  }
  int32_t coalesce_us = 0;
  if (argc >= 5) {
    CHECK(env, napi_typeof(env, argv[4], &t));
    if (t == napi_number) CHECK(env, napi_get_value_int32(env, argv[4], &coalesce_us));
    if (coalesce_us < 0 || coalesce_us > 100000) {
      napi_throw_range_error(env, NULL, "coalesceUs must be 0-100000"); return NULL;
    }
  }

  struct sockaddr_storage ss;
  socklen_t sslen;
  memset(&ss, 0, sizeof ss);
  int family;
  struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
    family = AF_INET; s4->sin_family = AF_INET; s4->sin_port = htons((uint16_t)port); sslen = sizeof *s4;
  } else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
    family = AF_INET6; s6->sin6_family = AF_INET6; s6->sin6_port = htons((uint16_t)port); sslen = sizeof *s6;
  } else {
    napi_throw_type_error(env, NULL, "address must be an IPv4 or IPv6 literal"); return NULL;
  }

  int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  int sz = 8 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  // the kernel's receive time of each packet, as a control message (the queue age above); a
  // kernel without it leaves the ages unknown (-1) and nothing is dropped for age
  int stamp = 1;
  setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &stamp, sizeof stamp);
  if (family == AF_INET6) {
    int off = 0;  // dual stack on "::", as dgram does
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  }
  if (reuse) {
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0) {
      int e = errno; close(fd); return throw_errno(env, "setsockopt SO_REUSEPORT", e);
    }
  }
  if (bind(fd, (struct sockaddr *)&ss, sslen) != 0) {
    int e = errno; close(fd); return throw_errno(env, "bind", e);
  }
  struct sockaddr_storage bound;
  socklen_t blen = sizeof bound;
  if (getsockname(fd, (struct sockaddr *)&bound, &blen) != 0) {
    int e = errno; close(fd); return throw_errno(env, "getsockname", e);
  }
  int bport = family == AF_INET ? ntohs(((struct sockaddr_in *)&bound)->sin_port)
                                : ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);

  ub_t *u = (ub_t *)calloc(1, sizeof *u);
  if (!u) { close(fd); napi_throw_error(env, NULL, "out of memory"); return NULL; }
  u->fd = fd;
  u->family = family;
  u->env = env;
  u->tfd = -1;
  u->coalesce_us = coalesce_us;
  u->handles_open = 1;
  if (coalesce_us > 0) {
    u->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (u->tfd < 0) { int e = errno; close(fd); free(u); return throw_errno(env, "timerfd_create", e); }
  }

  napi_value obj, mem, v;
  void *memp = NULL;
  if (napi_create_object(env, &obj) != napi_ok ||
      napi_create_arraybuffer(env, MEM_SIZE, &memp, &mem) != napi_ok) {
    close(fd); if (u->tfd >= 0) close(u->tfd);
    free(u); napi_throw_error(env, NULL, "udp_batch: allocation failed"); return NULL;
  }
  u->mem = (unsigned char *)memp;
  memset(u->mem, 0, MEM_SIZE);
  if (napi_wrap(env, obj, u, ub_finalize, NULL, NULL) != napi_ok) {
    close(fd); if (u->tfd >= 0) close(u->tfd);
    free(u); napi_throw_error(env, NULL, "udp_batch: wrap failed"); return NULL;
  }
  napi_create_reference(env, obj, 1, &u->self);
  napi_create_reference(env, argv[2], 1, &u->cb);
  napi_create_reference(env, mem, 1, &u->mem_ref);
  napi_value rname;
  napi_create_string_utf8(env, "gslbd:udp-batch", NAPI_AUTO_LENGTH, &rname);
  napi_async_init(env, NULL, rname, &u->actx);
  napi_set_named_property(env, obj, "mem", mem);
  napi_create_int32(env, bport, &v);
  napi_set_named_property(env, obj, "port", v);
  napi_create_int32(env, family == AF_INET ? 4 : 6, &v);
  napi_set_named_property(env, obj, "family", v);

  uv_loop_t *loop = NULL;
  int init_failed = napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &u->poll, fd) != 0;
  if (!init_failed && u->tfd >= 0 && uv_poll_init(loop, &u->tpoll, u->tfd) != 0) {
    // The socket's handle is initialised: close it through libuv; the close callback finishes.
    u->poll.data = u;
    napi_throw_error(env, NULL, "udp_batch: uv_poll_init failed (timer)");
    close(u->tfd); u->tfd = -1;
    start_close(u);
    return NULL;
  }
  if (init_failed) {
    // Not polled: mark closed so the finalizer frees it once the references are dropped.
    close(fd); u->fd = -1; u->closed = 1;
    if (u->tfd >= 0) { close(u->tfd); u->tfd = -1; }
    napi_delete_reference(env, u->cb); u->cb = NULL;
    napi_delete_reference(env, u->mem_ref); u->mem_ref = NULL;
    napi_async_destroy(env, u->actx); u->actx = NULL;
    uint32_t n; napi_reference_unref(env, u->self, &n); napi_delete_reference(env, u->self); u->self = NULL;
    napi_throw_error(env, NULL, "udp_batch: uv_poll_init failed");
    return NULL;
  }
  u->poll.data = u;
  uv_poll_start(&u->poll, UV_READABLE, on_readable);
  u->polling = 1;
  if (u->tfd >= 0) {
    u->tpoll.data = u;
    u->handles_open = 2;
    uv_poll_start(&u->tpoll, UV_READABLE, on_tick);
  }
  napi_add_async_cleanup_hook(env, env_cleanup, u, &u->cleanup);
  return obj;
}

// close(handle): stops receiving; the socket is closed on the next loop turn. Idempotent.
static napi_value ub_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1) { napi_throw_type_error(env, NULL, "close(handle)"); return NULL; }
  ub_t *u = unwrap(env, argv[0]);
  if (!u) return NULL;
  if (!u->closed) start_close(u);
  return NULL;
}

// sendTo(handle, data: Uint8Array, family: 4|6, addr: Uint8Array(4|16), port) -> bool (sent)
// Sends one reply outside a batch (answers that waited for a database). Never throws on a
// failed send: returns false.
static napi_value ub_send_to(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5], res;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 5) { napi_throw_type_error(env, NULL, "sendTo(handle, data, family, addr, port)"); return NULL; }
  ub_t *u = unwrap(env, argv[0]);
  if (!u) return NULL;
  bool ok = false;
  void *data = NULL, *ab = NULL;
  size_t dlen = 0, alen = 0;
  bool is_ta = false;
  napi_typedarray_type tt;
  napi_value abv;
  size_t boff;
  int32_t fam = 0, port = 0;
  if (napi_is_typedarray(env, argv[1], &is_ta) != napi_ok || !is_ta) { napi_throw_type_error(env, NULL, "data must be a Uint8Array"); return NULL; }
  CHECK(env, napi_get_typedarray_info(env, argv[1], &tt, &dlen, &data, &abv, &boff));
  if (tt != napi_uint8_array) { napi_throw_type_error(env, NULL, "data must be a Uint8Array"); return NULL; }
  if (napi_is_typedarray(env, argv[3], &is_ta) != napi_ok || !is_ta) { napi_throw_type_error(env, NULL, "addr must be a Uint8Array"); return NULL; }
  CHECK(env, napi_get_typedarray_info(env, argv[3], &tt, &alen, &ab, &abv, &boff));
  if (tt != napi_uint8_array) { napi_throw_type_error(env, NULL, "addr must be a Uint8Array"); return NULL; }
  if (napi_get_value_int32(env, argv[2], &fam) != napi_ok || napi_get_value_int32(env, argv[4], &port) != napi_ok) {
    napi_throw_type_error(env, NULL, "family and port must be numbers"); return NULL;
  }
  if (u->closing || u->fd < 0 || port <= 0 || port > 65535 || dlen == 0 || dlen > 65507) goto done;
  struct sockaddr_storage ss;
  socklen_t sslen;
  memset(&ss, 0, sizeof ss);
  if (fam == 4 && alen >= 4) {
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    if (u->family == AF_INET) {
      s4->sin_family = AF_INET; s4->sin_port = htons((uint16_t)port); memcpy(&s4->sin_addr, ab, 4); sslen = sizeof *s4;
    } else {
      // An IPv6 socket reaches an IPv4 peer through its mapped address.
      struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
      s6->sin6_family = AF_INET6; s6->sin6_port = htons((uint16_t)port);
      s6->sin6_addr.s6_addr[10] = 0xff; s6->sin6_addr.s6_addr[11] = 0xff;
      memcpy(&s6->sin6_addr.s6_addr[12], ab, 4); sslen = sizeof *s6;
    }
  } else if (fam == 6 && alen >= 16 && u->family == AF_INET6) {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    s6->sin6_family = AF_INET6; s6->sin6_port = htons((uint16_t)port); memcpy(&s6->sin6_addr, ab, 16); sslen = sizeof *s6;
  } else {
    goto done;
  }
  for (int tries = 0; tries < 3; tries++) {
    ssize_t r = sendto(u->fd, data, dlen, MSG_DONTWAIT, (struct sockaddr *)&ss, sslen);
    if (r >= 0) { ok = true; u->sent++; break; }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) u->dropped++;
    else u->send_errors++;
    break;
  }
done:
  napi_get_boolean(env, ok, &res);
  return res;
}

// stats(handle) -> { received, sent, dropped, truncated, sendErrors, batches, ticks, closed }
// batches: JS callbacks (received / batches is the mean batch size); ticks: coalescing timer reads
static napi_value ub_stats(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], obj, v;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1) { napi_throw_type_error(env, NULL, "stats(handle)"); return NULL; }
  ub_t *u = unwrap(env, argv[0]);
  if (!u) return NULL;
  CHECK(env, napi_create_object(env, &obj));
  napi_create_double(env, u->received, &v); napi_set_named_property(env, obj, "received", v);
  napi_create_double(env, u->sent, &v); napi_set_named_property(env, obj, "sent", v);
  napi_create_double(env, u->dropped, &v); napi_set_named_property(env, obj, "dropped", v);
  napi_create_double(env, u->truncated, &v); napi_set_named_property(env, obj, "truncated", v);
  napi_create_double(env, u->send_errors, &v); napi_set_named_property(env, obj, "sendErrors", v);
  napi_create_double(env, u->batches, &v); napi_set_named_property(env, obj, "batches", v);
  napi_create_double(env, u->ticks, &v); napi_set_named_property(env, obj, "ticks", v);
  napi_get_boolean(env, u->closed != 0, &v); napi_set_named_property(env, obj, "closed", v);
  return obj;
}

static void set_int(napi_env env, napi_value obj, const char *name, int32_t n) {
  napi_value v;
  napi_create_int32(env, n, &v);
  napi_set_named_property(env, obj, name, v);
}

static void set_fn(napi_env env, napi_value obj, const char *name, napi_callback fn) {
  napi_value v;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &v);
  napi_set_named_property(env, obj, name, v);
}

static napi_value init(napi_env env, napi_value exports) {
  set_fn(env, exports, "open", ub_open);
  set_fn(env, exports, "close", ub_close);
  set_fn(env, exports, "sendTo", ub_send_to);
  set_fn(env, exports, "stats", ub_stats);
  set_int(env, exports, "BATCH", BATCH);
  set_int(env, exports, "RX_SLOT", RX_SLOT);
  set_int(env, exports, "TX_SLOT", TX_SLOT);
  set_int(env, exports, "TX_OFF", TX_OFF);
  set_int(env, exports, "META_OFF", META_OFF);
  set_int(env, exports, "ADDR_OFF", ADDR_OFF);
  set_int(env, exports, "AGE_OFF", AGE_OFF);
  set_int(env, exports, "MEM_SIZE", MEM_SIZE);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
