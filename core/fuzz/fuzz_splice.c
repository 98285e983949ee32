/* libFuzzer harness for TCP splicing (dp_splice). Built by the sanitizer
 * sub-build; see docs/fuzzing.md.
 *
 * Input layout (missing bytes read as zero):
 *   0-19   client ISN, switch ISN, local sequence number, server sequence
 *          number, response sequence number (4 bytes each)
 *   20..   segments, 14 header bytes each: direction (bit 0), TCP flags,
 *          seq (4), ack (4), payload length (0..63), edit offset, edit
 *          delete count, insert length (0..31), edit (bit 0); then the
 *          payload and insert bytes.
 * A connection is accepted, handshaken and bound; each segment is built
 * with dp_build (TCP checksum computed), optionally edited, translated.
 *
 * Invariants: after each edit and translation both checksums verify by a
 * full RFC 1071 sum (fuzz_check.h, not dp_csum); the payload is the old
 * one with the edit made; the sequence number written is dp_splice_map_seq
 * of the original and the acknowledgment dp_splice_map_ack; nothing is
 * written past the frame's capacity; while a direction has no edit,
 * mapping a number there and its acknowledgment back is the identity;
 * op counts are those of dp_splice.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "fuzz_check.h"

#define CANARY 0x5Au
#define CAP 400u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t rd(const uint8_t *d, size_t size, size_t at, unsigned n)
{
    uint8_t b[4] = {0, 0, 0, 0};
    unsigned i;
    for (i = 0; i < n; i++)
        b[i] = at + i < size ? d[at + i] : 0;
    return be(b, n);
}

static int sums_ok(const uint8_t *f, const dp_parsed_t *p)
{
    const uint8_t *ip = f + p->l3_offset;
    uint32_t seg = p->ip_total_len - (uint32_t)(p->l4_offset - p->l3_offset);
    return sum16(ip, 20, 0) == 0xFFFFu && sum16(f + p->l4_offset, seg, sum16(ip + 12, 8, 6 + seg)) == 0xFFFFu;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dp_splice_t sp;
    uint32_t cisn = rd(data, size, 0, 4), visn = rd(data, size, 4, 4), skip, take;
    size_t at = 20;
    int segs = 0;
    CHECK(dp_splice_accept(&sp, cisn, visn, NULL) == 0);
    CHECK(dp_splice_take(&sp, cisn + 1u, 1, visn + 1u, 0, &skip, &take, NULL) == 0);
    CHECK(dp_splice_bind(&sp, cisn + 1u, rd(data, size, 8, 4), rd(data, size, 12, 4), rd(data, size, 16, 4), NULL) ==
          0);
    while (at < size && segs++ < 32) {
        uint8_t frame[CAP], payload[64], ins[32], want[128];
        dp_build_spec_t s;
        dp_parsed_t p;
        dp_ops_t ops;
        size_t len = 0, i;
        int dir = (int)(rd(data, size, at, 1) & 1u), rc;
        uint8_t flags = (uint8_t)(rd(data, size, at + 1, 1) & 0x3Fu);
        uint32_t seq = rd(data, size, at + 2, 4), ack = rd(data, size, at + 6, 4);
        uint32_t plen = rd(data, size, at + 10, 1) % 64u, off, del, ilen = rd(data, size, at + 13, 1) % 32u;
        int edit = (int)(rd(data, size, at + 14, 1) & 1u);
        uint32_t want_seq, want_ack, wlen;
        off = plen ? rd(data, size, at + 11, 1) % (plen + 1u) : 0;
        del = rd(data, size, at + 12, 1) % (plen - off + 1u);
        at += 15;
        for (i = 0; i < plen; i++)
            payload[i] = (uint8_t)rd(data, size, at++, 1);
        for (i = 0; i < ilen; i++)
            ins[i] = (uint8_t)rd(data, size, at++, 1);
        memset(&s, 0, sizeof s);
        s.src_ip = 0xC6120001u;
        s.dst_ip = 0xC6130001u;
        s.ttl = 64;
        s.ip_proto = DP_IPPROTO_TCP;
        s.src_port = 40000;
        s.dst_port = 80;
        s.tcp_seq = seq;
        s.tcp_ack = ack;
        s.tcp_flags = flags;
        s.payload = payload;
        s.payload_len = (uint16_t)plen;
        s.l4_checksum = 1;
        memset(frame, CANARY, sizeof frame);
        CHECK(dp_build(&s, frame, 200, &len, NULL) == DP_OK);
        CHECK(dp_parse(frame, len, NULL, &p, NULL) == DP_OK);
        wlen = plen;
        memcpy(want, payload, plen);
        if (edit) {
            dp_splice_seqadj_t before = dir ? sp.s2c : sp.c2s;
            dp_ops_reset(&ops);
            rc = dp_splice_edit_frame(&sp, (dp_splice_dir_t)dir, frame, len, 200, &p, off, del, ins, ilen, &len, &ops);
            CHECK(rc == 0);
            memmove(want + off + ilen, payload + off + del, plen - off - del);
            memcpy(want + off, ins, ilen);
            wlen = plen - del + ilen;
            CHECK(p.payload_len == wlen && memcmp(frame + p.payload_offset, want, wlen) == 0);
            CHECK(sums_ok(frame, &p));
            CHECK(ops.csum_updates == 3 && ops.bytes_written == ilen + 6u);
            CHECK(ops.checksum_bytes == del + ilen + (((ilen - del) & 1u) ? 2u * (plen - off - del) : 0u));
            if (ilen == del)
                CHECK(memcmp(&before, dir ? &sp.s2c : &sp.c2s, sizeof before) == 0);
        }
        want_seq = dp_splice_map_seq(&sp, (dp_splice_dir_t)dir, seq);
        want_ack = dp_splice_map_ack(&sp, (dp_splice_dir_t)dir, ack);
        dp_ops_reset(&ops);
        CHECK(dp_splice_xlate(&sp, (dp_splice_dir_t)dir, frame, len, &p, &ops) == 0);
        CHECK(be(frame + p.l4_offset + 4, 4) == want_seq);
        CHECK(be(frame + p.l4_offset + 8, 4) == ((flags & 0x10) ? want_ack : ack));
        CHECK(sums_ok(frame, &p));
        CHECK(p.payload_len == wlen && memcmp(frame + p.payload_offset, want, wlen) == 0);
        CHECK(ops.csum_updates == ((flags & 0x10) ? 4u : 2u) && ops.bytes_parsed == 8);
        for (i = 200; i < CAP; i++)
            CHECK(frame[i] == CANARY);
        if (!sp.c2s.edited)
            CHECK(dp_splice_map_ack(&sp, DP_SPLICE_S2C, dp_splice_map_seq(&sp, DP_SPLICE_C2S, seq)) == seq);
        if (!sp.s2c.edited)
            CHECK(dp_splice_map_ack(&sp, DP_SPLICE_C2S, dp_splice_map_seq(&sp, DP_SPLICE_S2C, seq)) == seq);
    }
    return 0;
}
