/* Server health checks with HAProxy's semantics (the reference issue 20
 * holds the twin to), and the check kinds of the NCTU web switches (seed
 * 003: ping, TCP port, web page status, content).
 *
 * Rules, each from Debian bookworm's HAProxy 2.6.12 documentation
 * (/usr/share/doc/haproxy/configuration.txt, section 5.2 "Server and
 * default-server options") and its source (src/check.c, src/server.c,
 * include/haproxy/check.h):
 *   - "rise <count>": a server is considered operational after <count>
 *     consecutive successful checks (default 2); "fall <count>": dead after
 *     <count> consecutive unsuccessful checks (default 3).
 *   - The two are one counter, health in [0, rise + fall - 1]: the server is
 *     up while health >= rise. A passed check adds one and, on reaching
 *     rise, jumps to rise + fall - 1 ("OK now"); a failed check takes one
 *     and, falling below rise, drops to 0 (set_server_check_status in
 *     check.c). So an up server goes down after exactly `fall` consecutive
 *     failures from full health, a down one comes up after exactly `rise`
 *     consecutive passes, and a failure during a rise restarts it from 0.
 *   - Initial state: health = rise, "up, but will fall down at first
 *     failure" (server.c). DP_HEALTH_START_DOWN starts at health 0, down,
 *     needing rise passes: HAProxy's health for a server in maintenance,
 *     and balancers that admit a server only after its checks pass.
 *   - Interval (table under "inter <delay>"): "inter" when UP 100% (health
 *     = rise + fall - 1); "downinter" (else inter) when DOWN 100% (health 0
 *     and down); "fastinter" (else inter) when transitionally up or down "or
 *     yet unchecked" (srv_getinter in check.h). Defaults: inter 2000 ms.
 *   - The next check is due one interval after the previous one ENDED
 *     (process_chk: expire = now + srv_getinter() once the result is in),
 *     the interval taken from the health after that result.
 *   - "The inter parameter also serves as a timeout for health checks sent
 *     to servers if timeout check is not set" (same section): a probe that
 *     gets no answer fails after timeout_ms, else after inter.
 *   - Check phase: "the agent and health checks of all servers are started
 *     with a small time offset between them" (same section); start_checks /
 *     start_check_task in check.c put the first check of the p-th checked
 *     server (0-based, of n) at start + m * p / n, where m = max(the
 *     smallest interval >= 1000 ms of all checked servers, this server's
 *     interval), capped by global max-spread-checks when set.
 *   - Check kinds: TCP (a connect that succeeds: "check" without option,
 *     5.2 "check"); HTTP ("option httpchk": "considers that response
 *     statuses 2xx and 3xx are valid", 4.2 "option httpchk"); content
 *     ("http-check expect string <s>": the body contains s); ping (ICMP
 *     echo, the NCTU switches' layer-3 check; HAProxy has none).
 * Not modelled: spread-checks random noise (deterministic twin: 0, the
 * default), agent checks, observe layer4/layer7, on-marked-down actions,
 * disable-on-404 (the "CONDPASS" path), track.
 *
 * A dp_health_t is one server's checker, owned by the caller (no memory
 * allocated). The caller runs the probe (an ns-3 event or real traffic),
 * classifies what it saw with dp_health_classify, and reports the result
 * with dp_health_report at the probe's end time; the state change it
 * returns is fed to dp_sched_set_state (dp_health_apply_to_sched), which
 * does HAProxy's slow start on the way back up. Time is milliseconds on
 * any monotonic clock. */
#ifndef DP_HEALTH_H
#define DP_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"
#include "dp_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_HEALTH_EINVAL (-1) /* bad argument: NULL, rise or fall 0 or over 1000, inter 0, kind unknown */

#define DP_HEALTH_DEFAULT_INTER_MS 2000u /* "inter": defaults to 2000 ms */
#define DP_HEALTH_DEFAULT_RISE 2u
#define DP_HEALTH_DEFAULT_FALL 3u
#define DP_HEALTH_SPREAD_THRESHOLD_MS 1000u /* SRV_CHK_INTER_THRES: shorter intervals do not set the spread */
#define DP_HEALTH_MAX_COUNT 1000u           /* largest rise or fall accepted */

typedef enum dp_health_kind {
    DP_HEALTH_PING = 0, /* ICMP echo answered */
    DP_HEALTH_TCP,      /* TCP connect to the check port succeeds */
    DP_HEALTH_HTTP,     /* HTTP status within [status_min, status_max] (default 200..399) */
    DP_HEALTH_CONTENT,  /* HTTP status as above and the body contains expect[0..expect_len) */
    DP_HEALTH__KIND_COUNT
} dp_health_kind_t;

/* What a probe saw, as classified by dp_health_classify; the names follow
 * HAProxy's check status codes (L4CON, L4TOUT, L7STS, L7RSP, ...). */
typedef enum dp_health_result {
    DP_HEALTH_PASSED = 0,       /* L4OK / L7OK / echo reply */
    DP_HEALTH_FAIL_REFUSED,     /* L4CON: connection refused or reset (or ICMP unreachable) */
    DP_HEALTH_FAIL_TIMEOUT,     /* L4TOUT / L7TOUT: no answer within the check timeout */
    DP_HEALTH_FAIL_STATUS,      /* L7STS: HTTP status outside the accepted range */
    DP_HEALTH_FAIL_CONTENT,     /* L7RSP: the expected string is not in the body */
    DP_HEALTH__RESULT_COUNT
} dp_health_result_t;

/* Stable names: "ping", "tcp", "http", "content" / "passed", "refused",
 * "timeout", "bad_status", "no_content"; "unknown" when out of range. */
const char *dp_health_kind_name(int kind);
const char *dp_health_result_name(int result);

/* Initial state. */
#define DP_HEALTH_START_UP 0   /* HAProxy default: up at health = rise (falls at the first failure) */
#define DP_HEALTH_START_DOWN 1 /* health 0, down: in the pool after rise passes */

#define DP_HEALTH_MAX_EXPECT 64u /* longest content string */

typedef struct dp_health_config {
    uint32_t kind;          /* dp_health_kind_t */
    uint32_t inter_ms;      /* interval when fully up; >= 1 */
    uint32_t fastinter_ms;  /* interval in transition or unchecked; 0: inter */
    uint32_t downinter_ms;  /* interval when fully down; 0: inter */
    uint32_t timeout_ms;    /* "timeout check": probe without answer fails after it; 0: inter */
    uint16_t rise;          /* consecutive passes to come up, 1..1000 */
    uint16_t fall;          /* consecutive failures to go down, 1..1000 */
    uint16_t status_min;    /* HTTP/content: lowest accepted status; 0 with status_max 0: 200 */
    uint16_t status_max;    /* HTTP/content: highest accepted status; 0: 399 */
    uint32_t start;         /* DP_HEALTH_START_UP or DP_HEALTH_START_DOWN */
    uint32_t expect_len;    /* content: bytes of expect, 1..DP_HEALTH_MAX_EXPECT */
    uint8_t expect[DP_HEALTH_MAX_EXPECT]; /* content: the string the body must contain */
} dp_health_config_t;

/* Sets cfg to HAProxy's defaults for kind: inter 2000, no fastinter or
 * downinter, rise 2, fall 3, timeout = inter, statuses 200..399, start up. */
void dp_health_config_default(dp_health_config_t *cfg, dp_health_kind_t kind);

/* One server's checker. Fields are read-only for the caller. */
typedef struct dp_health {
    dp_health_config_t cfg;  /* copy of the configuration */
    uint32_t health;         /* 0 .. rise + fall - 1; up iff >= rise */
    uint32_t up;             /* 1 while the server is up (in the pool) */
    uint64_t next_check_ms;  /* when the next probe is due */
    uint64_t last_change_ms; /* time of the last up/down transition (or start) */
    uint64_t checks;         /* results reported */
    uint64_t failed_checks;  /* failed results that lowered health (HAProxy "chkfail") */
    uint64_t down_transitions; /* up -> down (HAProxy "chkdown") */
    uint64_t up_transitions;   /* down -> up */
    uint64_t by_result[DP_HEALTH__RESULT_COUNT]; /* results by kind */
} dp_health_t;

/* Transitions returned by dp_health_report. */
#define DP_HEALTH_NO_CHANGE 0
#define DP_HEALTH_WENT_DOWN 1
#define DP_HEALTH_WENT_UP 2

/* Checks cfg and starts the checker at start_ms with its first probe at
 * first_check_ms (see dp_health_first_check_ms). 0 or DP_HEALTH_EINVAL. */
int dp_health_init(dp_health_t *h, const dp_health_config_t *cfg, uint64_t start_ms, uint64_t first_check_ms);

/* The interval that follows a check ending in the current health
 * (HAProxy's srv_getinter): inter when health = rise + fall - 1, downinter
 * (else inter) when health = 0 and down, fastinter (else inter) otherwise. */
uint32_t dp_health_interval_ms(const dp_health_t *h);

/* The probe timeout: timeout_ms, else inter_ms. */
uint32_t dp_health_timeout_ms(const dp_health_config_t *cfg);

/* Classifies a probe: answered = 0 means no answer within the timeout
 * (timeout), refused = 1 a refusal (RST / unreachable); otherwise, for
 * HTTP and content, status and body[0..body_len) (body may be NULL when
 * body_len is 0). Ping and TCP pass when answered and not refused. Adds
 * bytes_parsed = byte comparisons of the content search (a naive search
 * from each start offset in order, stopping at the first match: at most
 * (body_len - expect_len + 1) * expect_len; 0 for other kinds, when the
 * status fails, or when the body is shorter than the string). */
dp_health_result_t dp_health_classify(const dp_health_config_t *cfg, int answered, int refused, uint32_t status,
                                      const uint8_t *body, uint32_t body_len, dp_ops_t *ops);

/* Reports a probe result at end_ms (the probe's end: its start plus the
 * answer's delay, or plus the timeout): updates health and up as above,
 * sets next_check_ms = end_ms + dp_health_interval_ms (from the new
 * health). Returns DP_HEALTH_NO_CHANGE, DP_HEALTH_WENT_DOWN or
 * DP_HEALTH_WENT_UP (DP_HEALTH_EINVAL for a NULL h or unknown result).
 * Adds table_writes = 1. */
int dp_health_report(dp_health_t *h, dp_health_result_t result, uint64_t end_ms, dp_ops_t *ops);

/* The check phase: first probe of the pos-th of n checked servers
 * (0 <= pos < n) started at start_ms, with min_inter_ms the smallest
 * initial interval >= DP_HEALTH_SPREAD_THRESHOLD_MS among all checked
 * servers (0 if none; dp_health_spread_min_inter), own_inter_ms this
 * server's initial interval, max_spread_ms global max-spread-checks (0:
 * none): start_ms + m * pos / n with m = min(max(min_inter, own_inter),
 * max_spread when set), integer arithmetic as HAProxy's. */
uint64_t dp_health_first_check_ms(uint64_t start_ms, uint32_t pos, uint32_t n, uint32_t min_inter_ms,
                                  uint32_t own_inter_ms, uint32_t max_spread_ms);

/* The initial interval of a configuration (the interval at health = rise,
 * or at 0 for a down start) and the spread minimum over n configurations. */
uint32_t dp_health_initial_interval_ms(const dp_health_config_t *cfg);
uint32_t dp_health_spread_min_inter(const dp_health_config_t *cfgs, uint32_t n);

/* Closed-form detection window of a server that dies (every probe from
 * then on fails after fail_delay_ms: 0 for a refusal, the timeout for a
 * silent server) while fully up, with probes every inter_ms: the first
 * failing probe starts within [0, inter) after the death, each further one
 * fastinter (else inter) after the previous one ended, and the fall-th
 * failure marks it down:
 *   min = fall * fail_delay + (fall - 1) * fastinter
 *   max = min + inter   (exclusive bound)
 * Returns 0 (and *min_ms, *max_ms) or DP_HEALTH_EINVAL. */
int dp_health_detection_window(const dp_health_config_t *cfg, uint32_t fail_delay_ms, uint64_t *min_ms,
                               uint64_t *max_ms);

/* Applies a transition from dp_health_report to a scheduler: WENT_DOWN
 * sets server id DP_SCHED_DOWN, WENT_UP sets DP_SCHED_UP (with HAProxy slow
 * start when the server has one), at now_ms; NO_CHANGE does nothing.
 * Returns what dp_sched_set_state returns (0 for NO_CHANGE) and adds its
 * counts. */
int dp_health_apply_to_sched(int transition, dp_sched_t *s, uint32_t id, uint64_t now_ms, dp_ops_t *ops);

#ifdef __cplusplus
}
#endif
#endif
