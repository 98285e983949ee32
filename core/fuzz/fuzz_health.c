/* libFuzzer harness for the health checker: a fuzzed configuration and a
 * sequence of probe results, each checked against a model kept here that
 * reads rise and fall as the manual words them (consecutive passes while
 * down, consecutive failures while up, one failure from the initial
 * "up, but will fall down at first failure" state) instead of HAProxy's
 * single counter, and against the interval table of configuration.txt 5.2
 * "inter"; plus content classifications against a plain substring search.
 * Built by the sanitizer sub-build (see docs/fuzzing.md).
 *
 * Input: 8 configuration bytes (kind, rise, fall, start, inter, fastinter,
 * downinter, timeout: small values so transitions are frequent), then
 * operations of 2 bytes (a truncated last one is ignored):
 *   op % 4 != 3  report: result byte (% 5), dt byte (ms to the probe's end)
 *   op % 4 == 3  classify: status byte (status = 100 + 2 * byte), body
 *                length byte (% 24; the body is the next bytes, read as
 *                far as the input goes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int contains(const uint8_t *b, size_t n, const uint8_t *p, size_t m)
{
    size_t i;
    if (m > n)
        return 0;
    for (i = 0; i + m <= n; i++)
        if (memcmp(b + i, p, m) == 0)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dp_health_config_t c;
    dp_health_t h;
    size_t i;
    uint64_t now = 0;
    int up, passes, fails_to_down;
    if (size < 8)
        return 0;
    dp_health_config_default(&c, (dp_health_kind_t)(data[0] % DP_HEALTH__KIND_COUNT));
    c.rise = (uint16_t)(1 + data[1] % 6);
    c.fall = (uint16_t)(1 + data[2] % 6);
    c.start = data[3] & 1u;
    c.inter_ms = 1u + data[4];
    c.fastinter_ms = data[5] % 3 ? data[5] : 0;
    c.downinter_ms = data[6] % 3 ? 1000u + data[6] : 0;
    c.timeout_ms = data[7];
    memcpy(c.expect, "ok", 2);
    c.expect_len = 2;
    CHECK(dp_health_init(&h, &c, 0, 0) == 0);
    up = c.start == DP_HEALTH_START_UP;
    passes = 0;
    fails_to_down = up ? 1 : 0;
    for (i = 8; i + 2 <= size; i += 2) {
        uint8_t op = data[i], arg = data[i + 1];
        if (op % 4 == 3) {
            size_t n = arg % 24u, avail = size - (i + 2);
            const uint8_t *body = data + i + 2;
            dp_ops_t ops;
            dp_health_result_t r;
            uint32_t status = 100u + 2u * op;
            if (n > avail)
                n = avail;
            dp_ops_reset(&ops);
            r = dp_health_classify(&c, 1, 0, status, body, (uint32_t)n, &ops);
            if (c.kind <= DP_HEALTH_TCP)
                CHECK(r == DP_HEALTH_PASSED);
            else if (status < 200 || status > 399)
                CHECK(r == DP_HEALTH_FAIL_STATUS);
            else if (c.kind == DP_HEALTH_CONTENT)
                CHECK((r == DP_HEALTH_PASSED) == contains(body, n, c.expect, c.expect_len) &&
                      ops.bytes_parsed <= (n >= 2 ? (n - 1) * 2 : 0));
            else
                CHECK(r == DP_HEALTH_PASSED);
            continue;
        }
        {
            dp_health_result_t r = (dp_health_result_t)(arg % DP_HEALTH__RESULT_COUNT);
            int pass = r == DP_HEALTH_PASSED, want = DP_HEALTH_NO_CHANGE, got;
            uint32_t fast = c.fastinter_ms ? c.fastinter_ms : c.inter_ms;
            uint32_t down = c.downinter_ms ? c.downinter_ms : c.inter_ms, interval;
            now += op;
            if (up) {
                if (pass) {
                    fails_to_down = c.fall;
                } else if (--fails_to_down == 0) {
                    up = 0;
                    passes = 0;
                    want = DP_HEALTH_WENT_DOWN;
                }
            } else if (!pass) {
                passes = 0;
            } else if (++passes == c.rise) {
                up = 1;
                fails_to_down = c.fall;
                want = DP_HEALTH_WENT_UP;
            }
            got = dp_health_report(&h, r, now, NULL);
            CHECK(got == want);
            CHECK((int)h.up == up);
            CHECK(h.health <= (uint32_t)c.rise + c.fall - 1u);
            CHECK((h.health >= c.rise) == (h.up != 0));
            interval = up ? (fails_to_down == c.fall ? c.inter_ms : fast) : (passes == 0 ? down : fast);
            CHECK(dp_health_interval_ms(&h) == interval);
            CHECK(h.next_check_ms == now + interval);
        }
    }
    return 0;
}
