#include "dp_splice.h"

#include <string.h>

#include "dp_bytes.h"
#include "dp_csum.h"

/* Layout check (C99): the connection state stays 64 bytes. */
typedef char dp_splice_size_check[(sizeof(dp_splice_t) == 64) ? 1 : -1];

int dp_splice_after(uint32_t a, uint32_t b)
{
    /* RFC 793 3.3: a is after b when a - b, taken modulo 2^32, lies in
     * (0, 2^31). */
    uint32_t d = a - b;
    return d != 0 && d < 0x80000000u;
}

int dp_splice_accept(dp_splice_t *sp, uint32_t client_isn, uint32_t vip_isn, dp_ops_t *ops)
{
    if (!sp)
        return DP_SPLICE_EINVAL;
    memset(sp, 0, sizeof *sp);
    sp->client_isn = client_isn;
    sp->vip_isn = vip_isn;
    sp->c_next = client_isn + 1u;
    sp->v_next = vip_isn + 1u;
    sp->state = DP_SPLICE_SYN_RCVD;
    if (ops)
        ops->table_writes++;
    return 0;
}

int dp_splice_take(dp_splice_t *sp, uint32_t seq, int has_ack, uint32_t ack, uint32_t payload_len, uint32_t *skip,
                   uint32_t *take, dp_ops_t *ops)
{
    uint32_t old, end;
    int wrote = 0;
    if (!sp || !skip || !take)
        return DP_SPLICE_EINVAL;
    *skip = *take = 0;
    if (sp->state == DP_SPLICE_SYN_RCVD) {
        if (!has_ack || ack != sp->vip_isn + 1u)
            return DP_SPLICE_EACK;
        sp->state = DP_SPLICE_BUFFERING;
        wrote = 1;
    } else if (sp->state != DP_SPLICE_BUFFERING && sp->state != DP_SPLICE_SPLICED) {
        return DP_SPLICE_ESTATE;
    }
    if (dp_splice_after(seq, sp->c_next)) {
        if (wrote && ops)
            ops->table_writes++;
        return DP_SPLICE_EGAP;
    }
    old = sp->c_next - seq; /* bytes of this segment already taken */
    end = seq + payload_len;
    if (payload_len > old) {
        *skip = old;
        *take = payload_len - old;
        sp->c_next = end;
        wrote = 1;
    } else {
        *skip = payload_len;
    }
    if (wrote && ops)
        ops->table_writes++;
    return 0;
}

int dp_splice_bind(dp_splice_t *sp, uint32_t req_seq, uint32_t local_seq, uint32_t server_seq, uint32_t resp_seq,
                   dp_ops_t *ops)
{
    if (!sp)
        return DP_SPLICE_EINVAL;
    if (sp->state != DP_SPLICE_BUFFERING && sp->state != DP_SPLICE_SPLICED)
        return DP_SPLICE_ESTATE;
    memset(&sp->c2s, 0, sizeof sp->c2s);
    memset(&sp->s2c, 0, sizeof sp->s2c);
    sp->c2s.offset_before = sp->c2s.offset_after = local_seq - req_seq;
    sp->s2c.offset_before = sp->s2c.offset_after = resp_seq - server_seq;
    sp->bound_seq = req_seq;
    if (dp_splice_after(req_seq, sp->c_next))
        sp->c_next = req_seq;
    sp->binds++;
    sp->state = DP_SPLICE_SPLICED;
    if (ops)
        ops->table_writes++;
    return 0;
}

static const dp_splice_seqadj_t *way(const dp_splice_t *sp, dp_splice_dir_t dir)
{
    return dir == DP_SPLICE_C2S ? &sp->c2s : &sp->s2c;
}

uint32_t dp_splice_map_seq(const dp_splice_t *sp, dp_splice_dir_t dir, uint32_t seq)
{
    const dp_splice_seqadj_t *w = way(sp, dir);
    return seq + ((w->edited && dp_splice_after(seq, w->correction_pos)) ? w->offset_after : w->offset_before);
}

uint32_t dp_splice_map_ack(const dp_splice_t *sp, dp_splice_dir_t dir, uint32_t ack)
{
    /* The ack acknowledges the other direction's bytes in the receiver's
     * space; take it back to the sender's (nf_ct_seq_adjust). */
    const dp_splice_seqadj_t *o = way(sp, dir == DP_SPLICE_C2S ? DP_SPLICE_S2C : DP_SPLICE_C2S);
    return ack - ((o->edited && dp_splice_after(ack - o->offset_before, o->correction_pos)) ? o->offset_after
                                                                                             : o->offset_before);
}

/* The TCP header of a parsed frame, or NULL when p does not fit frame. */
static uint8_t *tcp_of(uint8_t *frame, size_t len, const dp_parsed_t *p)
{
    if (!frame || !p || p->ip_proto != DP_IPPROTO_TCP || (size_t)p->l4_offset + DP_TCP_MIN_HDR_LEN > len ||
        p->payload_offset < p->l4_offset + DP_TCP_MIN_HDR_LEN || (size_t)p->payload_offset + p->payload_len > len ||
        p->l3_offset + DP_IP4_MIN_HDR_LEN > p->l4_offset ||
        (uint32_t)p->l3_offset + p->ip_total_len != (uint32_t)p->payload_offset + p->payload_len)
        return NULL;
    return frame + p->l4_offset;
}

int dp_splice_xlate(dp_splice_t *sp, dp_splice_dir_t dir, uint8_t *frame, size_t len, const dp_parsed_t *p,
                    dp_ops_t *ops)
{
    uint8_t *tcp = tcp_of(frame, len, p);
    uint32_t seq, nseq, ack, end;
    uint16_t csum;
    int has_ack;
    if (!sp || !tcp || (dir != DP_SPLICE_C2S && dir != DP_SPLICE_S2C))
        return DP_SPLICE_EINVAL;
    if (sp->state != DP_SPLICE_SPLICED)
        return DP_SPLICE_ESTATE;
    seq = rd32(tcp + 4);
    ack = rd32(tcp + 8);
    has_ack = (tcp[13] & 0x10) != 0;
    csum = rd16(tcp + 16);
    nseq = dp_splice_map_seq(sp, dir, seq);
    csum = dp_csum_update32(csum, seq, nseq, ops);
    wr32(tcp + 4, nseq);
    if (has_ack) {
        uint32_t nack = dp_splice_map_ack(sp, dir, ack);
        csum = dp_csum_update32(csum, ack, nack, ops);
        wr32(tcp + 8, nack);
    }
    wr16(tcp + 16, csum);
    /* Segment length in sequence space: payload, SYN and FIN. */
    end = p->payload_len + ((tcp[13] & 0x02) ? 1u : 0u) + ((tcp[13] & 0x01) ? 1u : 0u);
    if (dir == DP_SPLICE_C2S) {
        if (dp_splice_after(seq + end, sp->c_next))
            sp->c_next = seq + end;
    } else if (dp_splice_after(nseq + end, sp->v_next)) {
        sp->v_next = nseq + end;
    }
    if (ops) {
        ops->bytes_parsed += 8;
        ops->bytes_written += has_ack ? 10u : 6u;
    }
    return 0;
}

/* One's-complement sum of b[0..n) placed at an odd (odd != 0) or even
 * offset of the checksummed data: at an odd offset every byte is in the
 * other half of its 16-bit word, which swaps the sum's bytes (RFC 1071
 * 2(B), byte-order independence). */
static uint16_t sum_at(const uint8_t *b, size_t n, int odd, dp_ops_t *ops)
{
    uint16_t s = dp_csum_partial(b, n, 0, ops);
    return odd ? (uint16_t)((s << 8) | (s >> 8)) : s;
}

int dp_splice_edit_frame(dp_splice_t *sp, dp_splice_dir_t dir, uint8_t *frame, size_t len, size_t cap,
                         dp_parsed_t *p, uint32_t off, uint32_t del, const uint8_t *ins, uint32_t ins_len,
                         size_t *out_len, dp_ops_t *ops)
{
    uint8_t *tcp = tcp_of(frame, len, p), *ip;
    uint32_t pay_rel, tail, new_total, old_total, new_frame, seq, delta;
    uint16_t tsum, isum, old_sum, new_sum;
    int odd_start, shifts;
    dp_splice_seqadj_t *w;
    if (!sp || !tcp || !out_len || (!ins && ins_len) || (dir != DP_SPLICE_C2S && dir != DP_SPLICE_S2C) ||
        off > p->payload_len || del > p->payload_len - off)
        return DP_SPLICE_EINVAL;
    if (sp->state != DP_SPLICE_SPLICED)
        return DP_SPLICE_ESTATE;
    ip = frame + p->l3_offset;
    old_total = p->ip_total_len;
    new_total = old_total - del + ins_len;
    new_frame = p->l3_offset + new_total;
    if (new_total > 65535u || (new_frame < 60u ? 60u : new_frame) > cap)
        return DP_SPLICE_ENOSPC;
    pay_rel = (uint32_t)(p->payload_offset - p->l4_offset) + off; /* edit offset within the TCP segment */
    tail = p->payload_len - off - del;
    odd_start = (int)(pay_rel & 1u);
    shifts = ((ins_len - del) & 1u) != 0;
    tsum = rd16(tcp + 16);
    /* Sum out what leaves or moves, at its old place. */
    old_sum = sum_at(tcp + pay_rel, del + (shifts ? tail : 0u), odd_start, ops);
    if (ins_len != del)
        memmove(tcp + pay_rel + ins_len, tcp + pay_rel + del, tail);
    if (ins_len)
        memcpy(tcp + pay_rel, ins, ins_len);
    /* Sum in what arrived or moved, at its new place. */
    new_sum = sum_at(tcp + pay_rel, ins_len + (shifts ? tail : 0u), odd_start, ops);
    tsum = dp_csum_update16(tsum, old_sum, new_sum, ops);
    /* The pseudo-header's TCP length. */
    tsum = dp_csum_update16(tsum, (uint16_t)(old_total - (p->l4_offset - p->l3_offset)),
                            (uint16_t)(new_total - (p->l4_offset - p->l3_offset)), ops);
    wr16(tcp + 16, tsum);
    isum = dp_csum_update16(rd16(ip + 10), (uint16_t)old_total, (uint16_t)new_total, ops);
    wr16(ip + 2, new_total);
    wr16(ip + 10, isum);
    if (new_frame < 60u)
        memset(frame + new_frame, 0, 60u - new_frame);
    *out_len = new_frame < 60u ? 60u : new_frame;
    p->ip_total_len = (uint16_t)new_total;
    p->payload_len = (uint16_t)(p->payload_len - del + ins_len);
    delta = ins_len - del;
    seq = rd32(tcp + 4);
    w = dir == DP_SPLICE_C2S ? &sp->c2s : &sp->s2c;
    if (delta != 0 && (!w->edited || dp_splice_after(seq, w->correction_pos))) {
        w->correction_pos = seq;
        w->offset_before = w->offset_after;
        w->offset_after += delta;
        w->edited = 1;
    }
    if (ops) {
        ops->bytes_written += ins_len + 6u;
        ops->bytes_copied += ins_len != del ? tail : 0u;
    }
    return 0;
}

uint32_t dp_splice_next_seq(const dp_splice_t *sp, dp_splice_dir_t dir)
{
    return dir == DP_SPLICE_C2S ? dp_splice_map_seq(sp, DP_SPLICE_C2S, sp->c_next) : sp->v_next;
}

const char *dp_splice_state_name(dp_splice_state_t s)
{
    static const char *const names[] = {"closed", "syn_rcvd", "buffering", "spliced"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}
