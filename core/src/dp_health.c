/* Server health checks: HAProxy 2.6's rise/fall counter and check
 * intervals (see dp_health.h for the rules and where each comes from). */
#include "dp_health.h"

#include <string.h>

static const char *const kind_names[DP_HEALTH__KIND_COUNT] = {"ping", "tcp", "http", "content"};
static const char *const result_names[DP_HEALTH__RESULT_COUNT] = {"passed", "refused", "timeout", "bad_status",
                                                                  "no_content"};

const char *dp_health_kind_name(int kind)
{
    return kind >= 0 && kind < DP_HEALTH__KIND_COUNT ? kind_names[kind] : "unknown";
}

const char *dp_health_result_name(int result)
{
    return result >= 0 && result < DP_HEALTH__RESULT_COUNT ? result_names[result] : "unknown";
}

void dp_health_config_default(dp_health_config_t *cfg, dp_health_kind_t kind)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kind = (uint32_t)kind;
    cfg->inter_ms = DP_HEALTH_DEFAULT_INTER_MS;
    cfg->rise = DP_HEALTH_DEFAULT_RISE;
    cfg->fall = DP_HEALTH_DEFAULT_FALL;
    cfg->start = DP_HEALTH_START_UP;
}

static int config_ok(const dp_health_config_t *cfg)
{
    if (!cfg || cfg->kind >= DP_HEALTH__KIND_COUNT || cfg->inter_ms == 0)
        return 0;
    if (cfg->rise == 0 || cfg->fall == 0 || cfg->rise > DP_HEALTH_MAX_COUNT || cfg->fall > DP_HEALTH_MAX_COUNT)
        return 0;
    if (cfg->start != DP_HEALTH_START_UP && cfg->start != DP_HEALTH_START_DOWN)
        return 0;
    if (cfg->kind == DP_HEALTH_CONTENT && (cfg->expect_len == 0 || cfg->expect_len > DP_HEALTH_MAX_EXPECT))
        return 0;
    if (cfg->status_max != 0 && cfg->status_min > cfg->status_max)
        return 0;
    return 1;
}

static uint32_t full_health(const dp_health_config_t *cfg)
{
    return (uint32_t)cfg->rise + cfg->fall - 1u;
}

int dp_health_init(dp_health_t *h, const dp_health_config_t *cfg, uint64_t start_ms, uint64_t first_check_ms)
{
    if (!h || !config_ok(cfg))
        return DP_HEALTH_EINVAL;
    memset(h, 0, sizeof *h);
    h->cfg = *cfg;
    if (cfg->start == DP_HEALTH_START_UP) {
        h->health = cfg->rise; /* server.c: "up, but will fall down at first failure" */
        h->up = 1;
    }
    h->last_change_ms = start_ms;
    h->next_check_ms = first_check_ms;
    return 0;
}

/* srv_getinter(): the table under "inter <delay>" in section 5.2. */
static uint32_t interval_for(const dp_health_config_t *cfg, uint32_t health, uint32_t up)
{
    if (health == full_health(cfg))
        return cfg->inter_ms;
    if (health == 0 && !up)
        return cfg->downinter_ms ? cfg->downinter_ms : cfg->inter_ms;
    return cfg->fastinter_ms ? cfg->fastinter_ms : cfg->inter_ms;
}

uint32_t dp_health_interval_ms(const dp_health_t *h)
{
    return interval_for(&h->cfg, h->health, h->up);
}

uint32_t dp_health_timeout_ms(const dp_health_config_t *cfg)
{
    return cfg->timeout_ms ? cfg->timeout_ms : cfg->inter_ms;
}

/* Naive substring search: the expect string is short (<= 64 bytes) and a
 * check body small, and the count of byte comparisons is what the cost
 * model wants, so no skip tables. */
static int body_contains(const uint8_t *body, uint32_t len, const uint8_t *pat, uint32_t plen, dp_ops_t *ops)
{
    uint32_t i, j, read = 0;
    int found = 0;
    if (plen <= len) {
        for (i = 0; i + plen <= len && !found; i++) {
            for (j = 0; j < plen; j++) {
                read++;
                if (body[i + j] != pat[j])
                    break;
            }
            found = (j == plen);
        }
    }
    if (ops)
        ops->bytes_parsed += read;
    return found;
}

dp_health_result_t dp_health_classify(const dp_health_config_t *cfg, int answered, int refused, uint32_t status,
                                      const uint8_t *body, uint32_t body_len, dp_ops_t *ops)
{
    uint32_t lo, hi;
    if (!answered)
        return DP_HEALTH_FAIL_TIMEOUT;
    if (refused)
        return DP_HEALTH_FAIL_REFUSED;
    if (cfg->kind == DP_HEALTH_PING || cfg->kind == DP_HEALTH_TCP)
        return DP_HEALTH_PASSED;
    /* "option httpchk": 2xx and 3xx are valid unless told otherwise. */
    lo = cfg->status_min;
    hi = cfg->status_max;
    if (lo == 0 && hi == 0) {
        lo = 200;
        hi = 399;
    } else if (hi == 0) {
        hi = 399;
    }
    if (status < lo || status > hi)
        return DP_HEALTH_FAIL_STATUS;
    if (cfg->kind == DP_HEALTH_CONTENT &&
        !body_contains(body ? body : (const uint8_t *)"", body ? body_len : 0, cfg->expect, cfg->expect_len, ops))
        return DP_HEALTH_FAIL_CONTENT;
    return DP_HEALTH_PASSED;
}

int dp_health_report(dp_health_t *h, dp_health_result_t result, uint64_t end_ms, dp_ops_t *ops)
{
    int change = DP_HEALTH_NO_CHANGE;
    uint32_t full;
    if (!h || (unsigned)result >= DP_HEALTH__RESULT_COUNT)
        return DP_HEALTH_EINVAL;
    full = full_health(&h->cfg);
    h->checks++;
    h->by_result[result]++;
    if (result == DP_HEALTH_PASSED) {
        /* check.c: health++; reaching rise jumps to rise + fall - 1. */
        if (h->health < full) {
            h->health++;
            if (h->health >= h->cfg.rise)
                h->health = full;
        }
    } else if (h->health > 0) {
        /* check.c: health--; below rise drops to 0 (a failure while
         * rising restarts the rise). A failure at health 0 changes nothing. */
        h->failed_checks++;
        h->health--;
        if (h->health < h->cfg.rise)
            h->health = 0;
    }
    if (h->up && h->health < h->cfg.rise) {
        h->up = 0;
        h->down_transitions++;
        h->last_change_ms = end_ms;
        change = DP_HEALTH_WENT_DOWN;
    } else if (!h->up && h->health >= h->cfg.rise) {
        h->up = 1;
        h->up_transitions++;
        h->last_change_ms = end_ms;
        change = DP_HEALTH_WENT_UP;
    }
    h->next_check_ms = end_ms + dp_health_interval_ms(h);
    if (ops)
        ops->table_writes++;
    return change;
}

uint64_t dp_health_first_check_ms(uint64_t start_ms, uint32_t pos, uint32_t n, uint32_t min_inter_ms,
                                  uint32_t own_inter_ms, uint32_t max_spread_ms)
{
    uint64_t m = min_inter_ms > own_inter_ms ? min_inter_ms : own_inter_ms;
    if (n == 0 || pos >= n)
        return start_ms;
    if (max_spread_ms && m > max_spread_ms)
        m = max_spread_ms;
    return start_ms + m * pos / n;
}

uint32_t dp_health_initial_interval_ms(const dp_health_config_t *cfg)
{
    if (cfg->start == DP_HEALTH_START_DOWN)
        return interval_for(cfg, 0, 0);
    return interval_for(cfg, cfg->rise, 1);
}

uint32_t dp_health_spread_min_inter(const dp_health_config_t *cfgs, uint32_t n)
{
    uint32_t i, m = 0;
    for (i = 0; i < n; i++) {
        uint32_t v = dp_health_initial_interval_ms(&cfgs[i]);
        if (v >= DP_HEALTH_SPREAD_THRESHOLD_MS && (m == 0 || v < m))
            m = v;
    }
    return m;
}

int dp_health_detection_window(const dp_health_config_t *cfg, uint32_t fail_delay_ms, uint64_t *min_ms,
                               uint64_t *max_ms)
{
    uint64_t fast;
    if (!config_ok(cfg) || !min_ms || !max_ms)
        return DP_HEALTH_EINVAL;
    /* From full health every failure but the last leaves the server
     * transitionally up, so the gaps between failures are fastinter. */
    fast = cfg->fall > 1 ? interval_for(cfg, full_health(cfg) - 1u, 1) : 0;
    *min_ms = (uint64_t)cfg->fall * fail_delay_ms + (uint64_t)(cfg->fall - 1u) * fast;
    *max_ms = *min_ms + cfg->inter_ms;
    return 0;
}

int dp_health_apply_to_sched(int transition, dp_sched_t *s, uint32_t id, uint64_t now_ms, dp_ops_t *ops)
{
    if (transition == DP_HEALTH_WENT_DOWN)
        return dp_sched_set_state(s, id, DP_SCHED_DOWN, now_ms, ops);
    if (transition == DP_HEALTH_WENT_UP)
        return dp_sched_set_state(s, id, DP_SCHED_UP, now_ms, ops);
    return 0;
}
