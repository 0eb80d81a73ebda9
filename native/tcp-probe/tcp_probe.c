// TCP probes for the health checker (runtime/health/checkers/tcp-native.ts).
//
// Why this exists: a TCP health probe only needs connect-then-reset, but probing through Node's
// net.Socket builds a Duplex stream, a TCPWrap handle, a connect request, a Promise, an
// AbortController and several listeners per probe. At 10,000 members on a 1 s interval that cost
// 43.5 us of user and 37.1 us of system CPU per probe, 80.6 % of one core (BENCHMARKS.md "Health").
// Here a probe is a non-blocking socket registered with one epoll instance owned by the addon; the
// epoll fd is watched by a single uv_poll_t on Node's loop, and every wakeup delivers all finished
// probes to JS in one callback through a shared Int32Array. Probes are started in batches too:
// JavaScript writes them into a shared start queue and one startBatch() call starts them all.
// Probes live in a table indexed by the caller's id (grown by doubling, no allocation per probe in
// the steady state). Optionally (synEnable, syn.c) IPv4 probes are half-open: a bare SYN from a raw
// socket, answered by SYN-ACK (up) or RST (refused), with no socket per probe at all.
//
// API (one instance per Node environment):
//   setup(callback(count)) -> ArrayBuffer   results: count x [id, errno (0 = up), rtt us]
//   queue()                -> ArrayBuffer   the start queue: QMAX entries of QW int32 (below)
//   startBatch(n)          -> number of the n queued entries that could not start; each has its
//                             errno in word 7 (EMFILE, EINVAL, ENETUNREACH, ...), the others 0
//   address(ip, out)       -> 4 or 6 with the address bytes written to the Int32Array `out`
//                             (4 words), or -EINVAL when `ip` is not a literal IPv4/IPv6 address
//   cancel(id)             -> true when the probe was in flight (ended, never reported)
//   inflight()             -> probes in flight
//   pooled()               -> idle sockets kept for reuse
//   synEnable()            -> 0, or -errno when the SYN path cannot open (EPERM: no CAP_NET_RAW)
//   synStats()             -> [first source port, replies dropped, SYNs sent through connect()
//                             instead, number of source ports, replies that matched no probe,
//                             RSTs sent for SYN-ACKs, RSTs the raw socket did not take,
//                             chunks of SYNs that waited for room in the send buffer]
// Start queue entry, int32 words: [0] id (negative: skipped, a probe cancelled before the batch),
// [1] port | family << 16 (4 or 6) | 1 << 20 for a SYN probe, [2..5] the address bytes as
// address() wrote them, [6] unused, [7] out: errno when the probe could not start, else 0.
// Every probe that startBatch() started is reported exactly once unless cancel()ed. A connected
// probe is aborted with connect(AF_UNSPEC) (connect(2): the kernel resets the connection, so an
// RST, no FIN exchange and no TIME_WAIT) and its socket goes back to a per-family pool, still
// registered with epoll as EPOLLONESHOT: the next probe re-arms it with EPOLL_CTL_MOD instead of
// paying socket(), setsockopt() and close() again. Failed or cancelled probes close their socket
// with SO_LINGER {1, 0} (also an RST).
#define _GNU_SOURCE
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define EVENTS 1024     // epoll events per epoll_wait
#define MAX_ROUNDS 16   // epoll_wait rounds per wakeup (level-triggered: the rest comes next turn)

uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t real_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void close_rst(int fd) {
  struct linger l = {1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

void probe_update_ref(state_t *s) {
  if (!s->poll || s->closing) return;
  if (s->inflight > 0 && !s->referenced) {
    uv_ref((uv_handle_t *)s->poll);
    s->referenced = 1;
  } else if (s->inflight == 0 && s->referenced) {
    uv_unref((uv_handle_t *)s->poll);
    s->referenced = 0;
  }
}

void probe_flush(state_t *s) {
  if (s->nresults == 0) return;
  uint32_t n = s->nresults;
  s->nresults = 0;
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value cb, recv, argv[1], ret;
  if (napi_get_reference_value(env, s->cb, &cb) == napi_ok && cb != NULL &&
      napi_get_global(env, &recv) == napi_ok &&  // napi_make_callback needs an object receiver
      napi_create_uint32(env, n, &argv[0]) == napi_ok) {
    napi_status st = napi_make_callback(env, s->actx, recv, cb, 1, argv, &ret);
    if (st == napi_pending_exception) {
      napi_value exc;
      napi_get_and_clear_last_exception(env, &exc);
      napi_fatal_exception(env, exc);  // surfaces as an uncaughtException, as from any callback
    }
  }
  napi_close_handle_scope(env, scope);
}

/** Aborts a connected probe's connection and keeps its socket for reuse; closes it otherwise. */
static void release(state_t *s, probe_t *p, int connected) {
  if (p->fd < 0) return;  // a SYN probe has no socket
  struct sockaddr sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_family = AF_UNSPEC;
  if (connected && s->npool[p->fam] < POOL_MAX && connect(p->fd, &sa, sizeof sa) == 0) {
    s->pool[p->fam][s->npool[p->fam]++] = p->fd;
    return;
  }
  close_rst(p->fd);
}

/** Ends a probe: its socket is pooled (connected) or closed, and its slot is free again. */
static void retire(state_t *s, probe_t *p, int connected) {
  release(s, p, connected);
  p->fd = FD_FREE;
  p->gen++;  // events and replies still on their way for the old probe no longer match the slot
  s->inflight--;
}

void probe_finish(state_t *s, uint32_t id, int err, uint64_t end_ns) {
  probe_t *p = &s->table[id];
  uint64_t us = end_ns > p->t0 ? (end_ns - p->t0) / 1000 : 0;
  retire(s, p, err == 0);
  int32_t *r = &s->results[s->nresults * 3];
  r[0] = (int32_t)id;
  r[1] = err;
  r[2] = us > INT32_MAX ? INT32_MAX : (int32_t)us;
  if (++s->nresults == BATCH) probe_flush(s);
}

static void on_poll(uv_poll_t *h, int status, int events) {
  (void)events;
  state_t *s = (state_t *)h->data;
  if (s->closing) return;
  if (status < 0) return;  // the epoll fd cannot fail short of a bug; nothing to read
  struct epoll_event ev[EVENTS];
  for (int round = 0; round < MAX_ROUNDS; round++) {
    int n = epoll_wait(s->ep, ev, EVENTS, 0);
    if (n <= 0) break;
    uint64_t t = now_ns();
    for (int i = 0; i < n; i++) {
      uint32_t id = (uint32_t)(ev[i].data.u64 & 0xffffffffu);
      uint32_t gen = (uint32_t)(ev[i].data.u64 >> 32);
      // A flush in this loop runs JS, which may cancel and restart ids: skip events that are stale.
      if (id >= s->cap || s->table[id].fd < 0 || s->table[id].gen != gen) continue;
      probe_t *p = &s->table[id];
      int err = p->err;
      // A pending socket error always raises EPOLLERR, so EPOLLOUT without EPOLLERR/EPOLLHUP means
      // the non-blocking connect completed (connect(2)): SO_ERROR is read only on those events,
      // which saves one system call per healthy probe.
      if (err == 0 && (ev[i].events & (EPOLLERR | EPOLLHUP))) {
        socklen_t len = sizeof err;
        if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) err = errno;
      }
      if (err == 0 && !(ev[i].events & EPOLLOUT)) err = ECONNRESET;
      probe_finish(s, id, err, t);
    }
    if (n < EVENTS) break;
  }
  probe_flush(s);
  probe_update_ref(s);
}

static int grow(state_t *s, uint32_t id) {
  if (id < s->cap) return 0;
  if (id >= MAX_ID) return EINVAL;
  uint32_t cap = s->cap ? s->cap : 1024;
  while (cap <= id) cap *= 2;
  probe_t *t = realloc(s->table, (size_t)cap * sizeof *t);
  if (!t) return ENOMEM;
  memset(t + s->cap, 0, (size_t)(cap - s->cap) * sizeof *t);
  for (uint32_t i = s->cap; i < cap; i++) t[i].fd = FD_FREE;
  s->table = t;
  s->cap = cap;
  return 0;
}

int connect_start(state_t *s, uint32_t id, int fam, const uint8_t *addr, uint16_t port) {
  struct sockaddr_storage ss;
  socklen_t sslen;
  memset(&ss, 0, sizeof ss);
  if (fam == 4) {
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    a4->sin_family = AF_INET;
    a4->sin_port = htons(port);
    memcpy(&a4->sin_addr, addr, 4);
    sslen = sizeof *a4;
  } else {
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(port);
    memcpy(&a6->sin6_addr, addr, 16);
    sslen = sizeof *a6;
  }
  int pi = fam == 6 ? 1 : 0;
  int fd, pooled = 0;
  if (s->npool[pi] > 0) {
    fd = s->pool[pi][--s->npool[pi]];
    pooled = 1;
  } else {
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
  }
  probe_t *p = &s->table[id];
  p->gen++;
  p->err = 0;
  p->t0 = now_ns();
  p->fam = pi;
  if (connect(fd, (struct sockaddr *)&ss, sslen) < 0 && errno != EINPROGRESS) p->err = errno;
  // An immediate result (success or error) still raises an epoll event at once (EPOLLOUT, or
  // EPOLLHUP on a failed socket), so every outcome is delivered the same way, asynchronously.
  struct epoll_event ev;
  // one event per probe: the socket stays registered (disarmed) while it waits in the pool
  ev.events = EPOLLOUT | EPOLLONESHOT;  // EPOLLERR and EPOLLHUP are always reported
  ev.data.u64 = ((uint64_t)p->gen << 32) | id;
  if (epoll_ctl(s->ep, pooled ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) < 0) {
    int rc = errno;
    close(fd);
    return rc;
  }
  p->fd = fd;
  s->inflight++;
  return 0;
}

static state_t *get_state(napi_env env) {
  void *d = NULL;
  if (napi_get_instance_data(env, &d) != napi_ok) return NULL;
  return (state_t *)d;
}

static napi_value throw_err(napi_env env, const char *msg) {
  napi_throw_error(env, NULL, msg);
  return NULL;
}

static napi_value js_setup(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  state_t *s = get_state(env);
  if (!s) return throw_err(env, "tcp_probe: no state");
  napi_valuetype t;
  if (argc < 1 || napi_typeof(env, argv[0], &t) != napi_ok || t != napi_function)
    return throw_err(env, "tcp_probe.setup: callback required");
  if (s->cb) return throw_err(env, "tcp_probe.setup: already set up");
  if (napi_create_reference(env, argv[0], 1, &s->cb) != napi_ok) return NULL;
  napi_value name, resource;
  if (napi_create_string_utf8(env, "tcp_probe", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_object(env, &resource) != napi_ok || napi_async_init(env, resource, name, &s->actx) != napi_ok)
    return NULL;
  napi_value buf, queue;
  void *data;
  if (napi_create_arraybuffer(env, BATCH * 3 * sizeof(int32_t), &data, &buf) != napi_ok) return NULL;
  s->results = data;
  if (napi_create_reference(env, buf, 1, &s->buf_ref) != napi_ok) return NULL;
  if (napi_create_arraybuffer(env, QMAX * QW * sizeof(int32_t), &data, &queue) != napi_ok) return NULL;
  s->queue = data;
  if (napi_create_reference(env, queue, 1, &s->queue_ref) != napi_ok) return NULL;
  s->ep = epoll_create1(EPOLL_CLOEXEC);
  if (s->ep < 0) return throw_err(env, "tcp_probe.setup: epoll_create1 failed");
  if (napi_get_uv_event_loop(env, &s->loop) != napi_ok) return NULL;
  s->poll = calloc(1, sizeof *s->poll);
  if (!s->poll) return throw_err(env, "tcp_probe.setup: out of memory");
  if (uv_poll_init(s->loop, s->poll, s->ep) != 0) {
    free(s->poll);
    s->poll = NULL;
    return throw_err(env, "tcp_probe.setup: uv_poll_init failed");
  }
  s->poll->data = s;
  uv_unref((uv_handle_t *)s->poll);  // idle probes never keep the process alive
  if (uv_poll_start(s->poll, UV_READABLE, on_poll) != 0) return throw_err(env, "tcp_probe.setup: uv_poll_start failed");
  s->polling = 1;
  return buf;
}

static napi_value js_queue(napi_env env, napi_callback_info info) {
  (void)info;
  state_t *s = get_state(env);
  napi_value q;
  if (!s || !s->queue_ref) return throw_err(env, "tcp_probe.queue: not set up");
  if (napi_get_reference_value(env, s->queue_ref, &q) != napi_ok) return NULL;
  return q;
}

/** Starts the first n entries of the start queue (see the top of this file). */
static napi_value js_start_batch(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], ret;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  state_t *s = get_state(env);
  if (!s || !s->polling) return throw_err(env, "tcp_probe.startBatch: not set up");
  uint32_t n = 0;
  if (argc < 1 || napi_get_value_uint32(env, argv[0], &n) != napi_ok || n > QMAX)
    return throw_err(env, "tcp_probe.startBatch(n): n must be 0..4096");
  int fails = 0;
  for (uint32_t k = 0; k < n; k++) {
    int32_t *e = &s->queue[k * QW];
    e[7] = 0;
    if (e[0] < 0) continue;
    uint32_t id = (uint32_t)e[0];
    uint32_t meta = (uint32_t)e[1];
    uint16_t port = (uint16_t)(meta & 0xffff);
    int fam = (int)((meta >> 16) & 0xf);
    int syn = (meta >> 20) & 1;
    const uint8_t *addr = (const uint8_t *)&e[2];
    int rc = (port == 0 || (fam != 4 && fam != 6)) ? EINVAL : grow(s, id);
    if (rc == 0 && s->table[id].fd != FD_FREE) rc = EBUSY;
    if (rc == 0) {
      if (syn && fam == 4 && s->syn) {
        uint32_t daddr;
        memcpy(&daddr, addr, 4);
        rc = syn_add(s, id, daddr, htons(port), (int)k);
      } else {
        rc = connect_start(s, id, fam, addr, port);
      }
    }
    if (rc != 0) {
      e[7] = rc;
      fails++;
    }
  }
  if (s->syn) fails += syn_send(s);
  probe_update_ref(s);
  napi_create_int32(env, fails, &ret);
  return ret;
}

static napi_value js_address(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], ret;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  char ip[64];
  size_t iplen = 0;
  napi_typedarray_type type;
  size_t len = 0;
  void *data = NULL;
  if (argc < 2 || napi_get_value_string_utf8(env, argv[0], ip, sizeof ip, &iplen) != napi_ok ||
      napi_get_typedarray_info(env, argv[1], &type, &len, &data, NULL, NULL) != napi_ok || type != napi_int32_array || len < 4)
    return throw_err(env, "tcp_probe.address(ip, Int32Array(4)): bad arguments");
  int fam = -EINVAL;
  uint8_t buf[16];
  memset(buf, 0, sizeof buf);
  if (iplen < sizeof ip - 1) {
    if (inet_pton(AF_INET, ip, buf) == 1) fam = 4;
    else if (inet_pton(AF_INET6, ip, buf) == 1) fam = 6;
  }
  if (fam > 0) memcpy(data, buf, 16);
  napi_create_int32(env, fam, &ret);
  return ret;
}

static napi_value js_cancel(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], ret;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  state_t *s = get_state(env);
  uint32_t id = 0;
  int was = 0;
  if (s && argc >= 1 && napi_get_value_uint32(env, argv[0], &id) == napi_ok && id < s->cap && s->table[id].fd != FD_FREE) {
    retire(s, &s->table[id], 0);  // closing removes it from the epoll set; a late SYN reply no longer matches
    probe_update_ref(s);
    was = 1;
  }
  napi_get_boolean(env, was, &ret);
  return ret;
}

static napi_value js_inflight(napi_env env, napi_callback_info info) {
  (void)info;
  state_t *s = get_state(env);
  napi_value ret;
  napi_create_uint32(env, s ? s->inflight : 0, &ret);
  return ret;
}

static napi_value js_pooled(napi_env env, napi_callback_info info) {
  (void)info;
  state_t *s = get_state(env);
  napi_value ret;
  napi_create_uint32(env, s ? s->npool[0] + s->npool[1] : 0, &ret);
  return ret;
}

static napi_value js_syn_enable(napi_env env, napi_callback_info info) {
  (void)info;
  state_t *s = get_state(env);
  if (!s || !s->polling) return throw_err(env, "tcp_probe.synEnable: not set up");
  napi_value ret;
  napi_create_int32(env, s->syn ? 0 : -syn_enable(s), &ret);
  return ret;
}

static napi_value js_syn_stats(napi_env env, napi_callback_info info) {
  (void)info;
  state_t *s = get_state(env);
  uint32_t st[SYN_STATS] = {0};
  if (s && s->syn) syn_stats(s, st);
  napi_value arr, v;
  napi_create_array_with_length(env, SYN_STATS, &arr);
  for (uint32_t i = 0; i < SYN_STATS; i++) {
    napi_create_uint32(env, st[i], &v);
    napi_set_element(env, arr, i, v);
  }
  return arr;
}

static void on_closed(uv_handle_t *h) { free(h); }

static void cleanup(void *arg) {
  state_t *s = (state_t *)arg;
  s->closing = 1;
  syn_cleanup(s);
  for (uint32_t i = 0; i < s->cap; i++)
    if (s->table[i].fd >= 0) close_rst(s->table[i].fd);
  for (int f = 0; f < 2; f++) {
    for (uint32_t i = 0; i < s->npool[f]; i++) close(s->pool[f][i]);
    s->npool[f] = 0;
  }
  if (s->poll) {
    uv_poll_stop(s->poll);
    uv_close((uv_handle_t *)s->poll, on_closed);
    s->poll = NULL;
  }
  if (s->ep >= 0) close(s->ep);
  s->ep = -1;
  free(s->table);
  s->table = NULL;
  s->cap = 0;
  // s itself is freed by the instance-data finalizer
}

static void free_state(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

static napi_value init(napi_env env, napi_value exports) {
  state_t *s = calloc(1, sizeof *s);
  if (!s) return throw_err(env, "tcp_probe: out of memory");
  s->env = env;
  s->ep = -1;
  if (napi_set_instance_data(env, s, free_state, NULL) != napi_ok) {
    free(s);
    return NULL;
  }
  napi_add_env_cleanup_hook(env, cleanup, s);
  napi_property_descriptor props[] = {
      {"setup", NULL, js_setup, NULL, NULL, NULL, napi_default, NULL},
      {"queue", NULL, js_queue, NULL, NULL, NULL, napi_default, NULL},
      {"startBatch", NULL, js_start_batch, NULL, NULL, NULL, napi_default, NULL},
      {"address", NULL, js_address, NULL, NULL, NULL, napi_default, NULL},
      {"cancel", NULL, js_cancel, NULL, NULL, NULL, napi_default, NULL},
      {"inflight", NULL, js_inflight, NULL, NULL, NULL, napi_default, NULL},
      {"pooled", NULL, js_pooled, NULL, NULL, NULL, napi_default, NULL},
      {"synEnable", NULL, js_syn_enable, NULL, NULL, NULL, napi_default, NULL},
      {"synStats", NULL, js_syn_stats, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
