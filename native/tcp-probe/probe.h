// State shared by the connect path (tcp_probe.c) and the half-open SYN path (syn.c).
#pragma once
#include <node_api.h>
#include <uv.h>
#include <stdint.h>

#define BATCH 2048        // results per JS callback
#define QMAX 4096         // probes per startBatch call (entries of the start queue)
#define QW 8              // int32 words per start-queue entry, see tcp_probe.c "Start queue"
#define MAX_ID (1u << 24) // probe ids stay below this (the SYN cookie carries 24 bits of id)
#define POOL_MAX 4096     // idle sockets kept per address family

#define FD_FREE (-1)      // slot not in flight
#define FD_SYN (-2)       // in flight on the SYN path (no socket of its own)

typedef struct {
  int fd;           // socket (connect path), FD_SYN, or FD_FREE
  int err;          // errno of a connect() that failed at once (reported on the first event)
  uint32_t gen;     // bumped on every start and end, tags epoll events and SYN cookies against id reuse
  uint64_t t0;      // start time, ns: CLOCK_MONOTONIC (connect path) or CLOCK_REALTIME (SYN path)
  int fam;          // 0 = IPv4, 1 = IPv6 (socket pool index)
  uint32_t daddr;   // SYN path: destination address and port (network order), to match replies
  uint16_t dport;
  uint16_t sport;   // SYN path: the source port the SYN left from (network order)
} probe_t;

typedef struct syn_s syn_t;

typedef struct {
  napi_env env;
  napi_ref cb;
  napi_ref buf_ref;
  napi_ref queue_ref;
  napi_async_context actx;
  int32_t *results;
  uint32_t nresults;
  int32_t *queue;
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
  syn_t *syn;        // the SYN path, NULL until enabled
} state_t;

uint64_t now_ns(void);
uint64_t real_ns(void);
/** Ends probe `id` with `err` (0: up) measured at `end_ns` (the clock of its t0); queues the result. */
void probe_finish(state_t *s, uint32_t id, int err, uint64_t end_ns);
/** Hands the queued results to JavaScript. */
void probe_flush(state_t *s);
/** Takes or drops the loop reference after the number of probes in flight changed. */
void probe_update_ref(state_t *s);
/** Starts probe `id` with connect(); 0 or an errno. */
int connect_start(state_t *s, uint32_t id, int fam, const uint8_t *addr, uint16_t port);

/** Opens the SYN path (raw socket, receiver thread); 0 or an errno (EPERM without CAP_NET_RAW). */
int syn_enable(state_t *s);
/** Stops the receiver thread and closes the SYN path's sockets. */
void syn_cleanup(state_t *s);
/** Queues a SYN for probe `id` (IPv4); 0 or an errno. Sent by syn_send. Consecutive probes of
 *  one address and port leave from different source ports (syn.c, "Source ports"). */
int syn_add(state_t *s, uint32_t id, uint32_t daddr, uint16_t dport, int entry);
/** Sends the queued SYNs; a SYN the raw socket cannot take goes through connect(). Returns the
 *  number of entries that failed (their errno written to the start queue). */
int syn_send(state_t *s);
#define SYN_STATS 8
/** SYN path counters for tests and the log: [first source port, replies dropped, connect
 *  fallbacks, number of source ports, replies that matched no probe in flight, RSTs sent
 *  for SYN-ACKs, RSTs the raw socket did not take, chunks of SYNs that waited for room]. */
void syn_stats(state_t *s, uint32_t out[SYN_STATS]);
