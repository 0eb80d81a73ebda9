// TCP connect probes for the health checker (runtime/health/checkers/tcp-native.ts).
//
// Why this exists: a TCP health probe only needs connect-then-reset, but probing through Node's
// net.Socket builds a Duplex stream, a TCPWrap handle, a connect request, a Promise, an
// AbortController and several listeners per probe. At 10,000 members on a 1 s interval that cost
// 43.5 us of user and 37.1 us of system CPU per probe, 80.6 % of one core (BENCHMARKS.md "Health").
// Here a probe is a non-blocking socket registered with one epoll instance owned by the addon; the
// epoll fd is watched by a single uv_poll_t on Node's loop, and every wakeup delivers all finished
// probes to JS in one callback through a shared Int32Array. Probes live in a table indexed by the
// caller's id (grown by doubling, no allocation per probe in the steady state).
//
// API (one instance per Node environment):
//   setup(callback(count)) -> ArrayBuffer   results: count x [id, errno (0 = connected), rtt us]
//   start(ip, port, id)    -> 0, or a negative errno when the probe could not start (EMFILE,
//                             EINVAL for an address that is not a literal IPv4/IPv6 address, ...)
//   cancel(id)             -> true when the probe was in flight (closed, never reported)
//   inflight()             -> probes in flight
//   pooled()               -> idle sockets kept for reuse
// Every probe that start() accepted is reported exactly once unless cancel()ed. A connected probe
// is aborted with connect(AF_UNSPEC) (connect(2): the kernel resets the connection, so an RST, no
// FIN exchange and no TIME_WAIT) and its socket goes back to a per-family pool, still registered
// with epoll as EPOLLONESHOT: the next probe re-arms it with EPOLL_CTL_MOD instead of paying
// socket(), setsockopt() and close() again. Failed or cancelled probes close their socket with
// SO_LINGER {1, 0} (also an RST).
#define _GNU_SOURCE
#include <node_api.h>
#include <uv.h>

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

#define BATCH 2048      // results per JS callback
#define EVENTS 1024     // epoll events per epoll_wait
#define MAX_ROUNDS 16   // epoll_wait rounds per wakeup (level-triggered: the rest comes next turn)
#define MAX_ID (1u << 24)
#define POOL_MAX 4096   // idle sockets kept per address family

typedef struct {
  int fd;          // -1 when free
  int err;         // errno of a connect() that failed at once (reported on the first event)
  uint32_t gen;    // bumped on every start, tags epoll events against id reuse
  uint64_t t0;     // start time, ns (CLOCK_MONOTONIC)
  int fam;         // 0 = IPv4, 1 = IPv6 (pool index)
} probe_t;

typedef struct {
  napi_env env;
  napi_ref cb;
  napi_ref buf_ref;
  napi_async_context actx;
  int32_t *results;
  uint32_t nresults;
  probe_t *table;
  uint32_t cap;
  uint32_t inflight;
  int ep;
  int polling;       // uv_poll started
  int referenced;    // uv handle ref'd (only while probes are in flight)
  int closing;
  uv_poll_t *poll;
  uv_loop_t *loop;
  int pool[2][POOL_MAX];  // disconnected sockets, registered with epoll and disarmed
  uint32_t npool[2];
} state_t;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void close_rst(int fd) {
  struct linger l = {1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

static void update_ref(state_t *s) {
  if (!s->poll || s->closing) return;
  if (s->inflight > 0 && !s->referenced) {
    uv_ref((uv_handle_t *)s->poll);
    s->referenced = 1;
  } else if (s->inflight == 0 && s->referenced) {
    uv_unref((uv_handle_t *)s->poll);
    s->referenced = 0;
  }
}

static void flush(state_t *s) {
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
  p->fd = -1;
  p->gen++;  // events still queued for the old socket no longer match the slot
  s->inflight--;
}

static void finish(state_t *s, uint32_t id, int err) {
  probe_t *p = &s->table[id];
  uint64_t us = (now_ns() - p->t0) / 1000;
  retire(s, p, err == 0);
  int32_t *r = &s->results[s->nresults * 3];
  r[0] = (int32_t)id;
  r[1] = err;
  r[2] = us > INT32_MAX ? INT32_MAX : (int32_t)us;
  if (++s->nresults == BATCH) flush(s);
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
      finish(s, id, err);
    }
    if (n < EVENTS) break;
  }
  flush(s);
  update_ref(s);
}

static int grow(state_t *s, uint32_t id) {
  if (id < s->cap) return 0;
  if (id >= MAX_ID) return EINVAL;
  uint32_t cap = s->cap ? s->cap : 1024;
  while (cap <= id) cap *= 2;
  probe_t *t = realloc(s->table, (size_t)cap * sizeof *t);
  if (!t) return ENOMEM;
  for (uint32_t i = s->cap; i < cap; i++) {
    t[i].fd = -1;
    t[i].err = 0;
    t[i].gen = 0;
    t[i].t0 = 0;
  }
  s->table = t;
  s->cap = cap;
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
  napi_value buf;
  void *data;
  if (napi_create_arraybuffer(env, BATCH * 3 * sizeof(int32_t), &data, &buf) != napi_ok) return NULL;
  s->results = data;
  if (napi_create_reference(env, buf, 1, &s->buf_ref) != napi_ok) return NULL;
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

static napi_value js_start(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], ret;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  state_t *s = get_state(env);
  if (!s || !s->polling) return throw_err(env, "tcp_probe.start: not set up");
  char ip[64];
  size_t iplen = 0;
  uint32_t port = 0, id = 0;
  if (argc < 3 || napi_get_value_string_utf8(env, argv[0], ip, sizeof ip, &iplen) != napi_ok ||
      napi_get_value_uint32(env, argv[1], &port) != napi_ok || napi_get_value_uint32(env, argv[2], &id) != napi_ok)
    return throw_err(env, "tcp_probe.start(ip, port, id): bad arguments");
  int rc = 0;
  struct sockaddr_storage ss;
  socklen_t sslen = 0;
  memset(&ss, 0, sizeof ss);
  struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
  if (port == 0 || port > 65535 || iplen >= sizeof ip - 1) {
    rc = EINVAL;
  } else if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    sslen = sizeof *a4;
  } else if (inet_pton(AF_INET6, ip, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    sslen = sizeof *a6;
  } else {
    rc = EINVAL;
  }
  if (rc == 0) rc = grow(s, id);
  if (rc == 0 && s->table[id].fd >= 0) rc = EBUSY;
  int fd = -1;
  int fam = ss.ss_family == AF_INET6 ? 1 : 0;
  int pooled = 0;
  if (rc == 0 && s->npool[fam] > 0) {
    fd = s->pool[fam][--s->npool[fam]];
    pooled = 1;
  } else if (rc == 0) {
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) rc = errno;
  }
  if (rc == 0) {
    probe_t *p = &s->table[id];
    p->gen++;
    p->err = 0;
    p->t0 = now_ns();
    p->fam = fam;
    if (connect(fd, (struct sockaddr *)&ss, sslen) < 0 && errno != EINPROGRESS) p->err = errno;
    // An immediate result (success or error) still raises an epoll event at once (EPOLLOUT, or
    // EPOLLHUP on a failed socket), so every outcome is delivered the same way, asynchronously.
    struct epoll_event ev;
    // one event per probe: the socket stays registered (disarmed) while it waits in the pool
    ev.events = EPOLLOUT | EPOLLONESHOT;  // EPOLLERR and EPOLLHUP are always reported
    ev.data.u64 = ((uint64_t)p->gen << 32) | id;
    if (epoll_ctl(s->ep, pooled ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) < 0) {
      rc = errno;
      close(fd);
    } else {
      p->fd = fd;
      s->inflight++;
      update_ref(s);
    }
  }
  napi_create_int32(env, -rc, &ret);
  return ret;
}

static napi_value js_cancel(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], ret;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  state_t *s = get_state(env);
  uint32_t id = 0;
  int was = 0;
  if (s && argc >= 1 && napi_get_value_uint32(env, argv[0], &id) == napi_ok && id < s->cap && s->table[id].fd >= 0) {
    retire(s, &s->table[id], 0);  // closing removes it from the epoll set
    update_ref(s);
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

static void on_closed(uv_handle_t *h) { free(h); }

static void cleanup(void *arg) {
  state_t *s = (state_t *)arg;
  s->closing = 1;
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
      {"start", NULL, js_start, NULL, NULL, NULL, napi_default, NULL},
      {"cancel", NULL, js_cancel, NULL, NULL, NULL, napi_default, NULL},
      {"inflight", NULL, js_inflight, NULL, NULL, NULL, napi_default, NULL},
      {"pooled", NULL, js_pooled, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
