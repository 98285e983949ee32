/* Delayed binding and TCP splicing of an L7 web switch: one client
 * connection, terminated by the switch until its request is complete, then
 * spliced onto a server-side connection by translating sequence and
 * acknowledgment numbers (seed 003, section 1.2 and table 1; A. Cohen,
 * S. Rangarajan, H. Slye, "On the performance of TCP splicing for
 * URL-aware redirection", USITS 1999).
 *
 * The life of a connection:
 *   1. dp_splice_accept: the client's SYN (ISN c) is answered by the
 *      switch with its own ISN v (a SYN cookie from dp_syncookie_make, or
 *      any seeded ISN); nothing is sent to a server.
 *   2. dp_splice_take for every client segment: it completes the handshake
 *      (ACK of v + 1) and says which payload bytes are new and in order;
 *      the caller feeds them to dp_http (whose buffer is the switch's
 *      request buffer) and ACKs the client up to c_next.
 *   3. Request complete, server chosen (dp_urlrule, dp_sched, a cookie):
 *      the caller opens the server connection with a SYN of ISN l; by
 *      default l = (request's first client sequence number) - 1, derived
 *      from the client's ISN, so client-to-server sequence numbers pass
 *      unchanged. When the server's SYN-ACK (ISN s) arrives,
 *      dp_splice_bind(req_seq, l + 1, s + 1, v_next) sets the mapping; the
 *      buffered request is sent in segments numbered from l + 1.
 *   4. Every later segment goes through dp_splice_xlate: client-to-server
 *      seq += D_c, ack -= D_s; server-to-client seq += D_s, ack -= D_c
 *      (mod 2^32), with the TCP checksum updated incrementally (RFC 1624).
 *      The addresses are dp_nat's work and are not touched here.
 *   5. An edit that changes a segment's length (a Set-Cookie inserted by
 *      dp_cookie, a header rewritten) is made by dp_splice_edit_frame,
 *      which also moves D for the bytes after it, as Linux's
 *      nf_conntrack_seqadj does (net/netfilter/nf_conntrack_seqadj.c): each
 *      direction keeps correction_pos (the sequence number of the last
 *      edited segment, in the sender's space), offset_before (for segments
 *      at or before it) and offset_after (after it). An acknowledgment is
 *      mapped back with offset_after when, taken back by offset_before,
 *      it lies after correction_pos, else with offset_before.
 *   6. Keep-alive: for the next request on the same client connection the
 *      caller rebinds (dp_splice_bind again: a new server connection, or a
 *      kept one of an earlier server, as F5 does) at the request's first
 *      client sequence number and v_next, once the previous response has
 *      been sent. Mappings of an earlier binding are forgotten.
 *
 * Sequence comparisons are modulo 2^32 (RFC 793 3.3, "after" = the signed
 * difference is positive); every number may wrap.
 *
 * What is not done: only the last length-changing edit per direction is
 * remembered (as Linux's seqadj): a retransmission of data sent before an
 * older edit gets the newer offset_before; one length-changing edit per
 * segment (a second edit of the segment at correction_pos is taken as a
 * retransmission of the first: offsets unchanged); SACK blocks and
 * timestamps are not translated (the model announces neither); a segment
 * grown past the path MTU is not split (the caller checks the length). */
#ifndef DP_SPLICE_H
#define DP_SPLICE_H

#include <stddef.h>
#include <stdint.h>

#include "dp_ops.h"
#include "dp_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_SPLICE_EINVAL (-1) /* bad argument; p does not describe a TCP frame of len bytes */
#define DP_SPLICE_ESTATE (-2) /* call not allowed in this state (e.g. xlate before bind) */
#define DP_SPLICE_EACK (-3)   /* handshake ACK does not acknowledge the switch's ISN + 1 */
#define DP_SPLICE_EGAP (-4)   /* client data after a gap (starts after c_next): not taken */
#define DP_SPLICE_ENOSPC (-5) /* edited frame over cap bytes or over 65535 bytes of IPv4 */

typedef enum dp_splice_state {
    DP_SPLICE_CLOSED = 0,   /* not in use */
    DP_SPLICE_SYN_RCVD,     /* SYN-ACK sent to the client, its ACK awaited */
    DP_SPLICE_BUFFERING,    /* client connection up, request being read */
    DP_SPLICE_SPLICED       /* bound to a server connection: translating */
} dp_splice_state_t;

typedef enum dp_splice_dir {
    DP_SPLICE_C2S = 0, /* client to server */
    DP_SPLICE_S2C = 1  /* server to client */
} dp_splice_dir_t;

/* Sequence adjustment of one direction (sender's space -> receiver's). */
typedef struct dp_splice_seqadj {
    uint32_t correction_pos; /* sender's sequence number of the last edited segment */
    uint32_t offset_before;  /* added to sequence numbers at or before correction_pos */
    uint32_t offset_after;   /* added to those after it */
    uint32_t edited;         /* nonzero once an edit has set correction_pos */
} dp_splice_seqadj_t;

/* One spliced connection (caller memory, 64 bytes). */
typedef struct dp_splice {
    uint32_t client_isn;    /* the client's ISN (its SYN's sequence number) */
    uint32_t vip_isn;       /* the switch's ISN toward the client */
    uint32_t c_next;        /* client space: next client byte expected (end of bytes taken or forwarded) */
    uint32_t v_next;        /* client space: next byte toward the client (end of bytes sent to it) */
    uint32_t bound_seq;     /* client sequence number where the current binding starts */
    uint32_t binds;         /* bindings made (1 + rebinds) */
    dp_splice_seqadj_t c2s; /* client to server */
    dp_splice_seqadj_t s2c; /* server to client */
    uint8_t state;          /* dp_splice_state_t */
    uint8_t pad[7];         /* zero */
} dp_splice_t;

/* 1 when a is after b modulo 2^32 (a != b and a - b < 2^31). */
int dp_splice_after(uint32_t a, uint32_t b);

/* Step 1: state SYN_RCVD, c_next = client_isn + 1, v_next = vip_isn + 1.
 * Adds table_writes 1. */
int dp_splice_accept(dp_splice_t *sp, uint32_t client_isn, uint32_t vip_isn, dp_ops_t *ops);

/* Step 2, for a client segment (seq, its ACK flag and ack, payload_len
 * bytes) before binding. In SYN_RCVD the segment must carry ACK = v + 1
 * (else DP_SPLICE_EACK), which makes the state BUFFERING. Then the payload
 * bytes [seq, seq + payload_len) that are new (at or after c_next) and in
 * order are taken: *skip = bytes at the start already taken (a
 * retransmission), *take = new bytes, c_next advances by *take. A segment
 * starting after c_next is DP_SPLICE_EGAP (nothing taken: the client will
 * retransmit). Also allowed in SPLICED, for the next request of a
 * keep-alive connection that the caller holds to choose its server
 * before rebinding. Returns 0, or an error (DP_SPLICE_ESTATE in CLOSED);
 * adds table_writes 1 when the state or c_next changes. */
int dp_splice_take(dp_splice_t *sp, uint32_t seq, int has_ack, uint32_t ack, uint32_t payload_len, uint32_t *skip,
                   uint32_t *take, dp_ops_t *ops);

/* Steps 3 and 6: bind the client bytes from req_seq (client space) to the
 * server-side sequence number local_seq (the switch's, toward the server),
 * and the server's bytes from server_seq to resp_seq (client space, toward
 * the client; normally v_next). D_c = local_seq - req_seq, D_s = resp_seq -
 * server_seq, no edit recorded. Allowed in BUFFERING and SPLICED; state
 * becomes SPLICED, binds + 1, c_next = req_seq if it was before req_seq.
 * Adds table_writes 1. */
int dp_splice_bind(dp_splice_t *sp, uint32_t req_seq, uint32_t local_seq, uint32_t server_seq, uint32_t resp_seq,
                   dp_ops_t *ops);

/* The sequence number seq of direction dir mapped to the receiver's
 * space, and an acknowledgment number ack sent in direction dir mapped
 * back to the space of the other direction's sender. No counters. */
uint32_t dp_splice_map_seq(const dp_splice_t *sp, dp_splice_dir_t dir, uint32_t seq);
uint32_t dp_splice_map_ack(const dp_splice_t *sp, dp_splice_dir_t dir, uint32_t ack);

/* Step 4: rewrites the TCP sequence number (and the acknowledgment number
 * when ACK is set) of frame[0..len), parsed into p, in place, with the
 * checksum updated by RFC 1624 (dp_csum_update32 per field). Tracks
 * c_next (C2S: end of the segment, SYN/FIN counted, when after c_next)
 * and v_next (S2C: end of the translated segment). Needs SPLICED. Adds
 * bytes_parsed 8 (sequence and acknowledgment fields read), bytes_written
 * 4 per number rewritten + 2 (checksum), csum_updates 2 per number
 * rewritten. */
int dp_splice_xlate(dp_splice_t *sp, dp_splice_dir_t dir, uint8_t *frame, size_t len, const dp_parsed_t *p,
                    dp_ops_t *ops);

/* Step 5: replaces payload bytes [off, off + del) of the TCP segment in
 * frame[0..len) (parsed into p, sequence number still in the sender's
 * space, i.e. before dp_splice_xlate) by ins[0..ins_len), in a buffer of
 * cap bytes: the bytes after the edit move, the IPv4 total length and
 * header checksum and the TCP checksum are updated incrementally, bytes
 * beyond the IPv4 total length (Ethernet padding) are dropped and the
 * frame is padded with zeros to 60 bytes when shorter; *out_len is the new
 * frame length, p is updated (ip_total_len, payload_len). When the length
 * changes by delta = ins_len - del, direction dir records it: if no edit
 * was recorded or seq is after correction_pos, correction_pos = seq,
 * offset_before = offset_after, offset_after += delta; a segment at or
 * before correction_pos (a retransmission) is edited without changing the
 * offsets. Needs SPLICED (a request still buffered is edited in the
 * buffer, dp_cookie_apply, before it is sent). Adds:
 * checksum_bytes = del + ins_len when delta is even, else del + ins_len +
 * 2 * (payload bytes after the edited range) (the rest of the segment
 * changes byte position, so it is summed out and in again);
 * csum_updates 3 (TCP sum, TCP length in the pseudo-header, IPv4 total
 * length); bytes_written ins_len + 6 (the inserted bytes, total length,
 * two checksums); bytes_copied = bytes moved (the payload after the edit,
 * when delta != 0). */
int dp_splice_edit_frame(dp_splice_t *sp, dp_splice_dir_t dir, uint8_t *frame, size_t len, size_t cap,
                         dp_parsed_t *p, uint32_t off, uint32_t del, const uint8_t *ins, uint32_t ins_len,
                         size_t *out_len, dp_ops_t *ops);

/* The sequence number a segment the switch itself sends in direction dir
 * must carry to be in the receiver's window: toward the server (C2S) the
 * mapping of c_next (e.g. the RST that Nortel sends after each request,
 * or the ACK that, the NCTU paper notes, Cisco's CSS 5.10 should have sent
 * to the old server on a 302 redirect; its RST carried a wrong number and
 * was ignored), toward the client (S2C) v_next. No counters. */
uint32_t dp_splice_next_seq(const dp_splice_t *sp, dp_splice_dir_t dir);

const char *dp_splice_state_name(dp_splice_state_t s); /* "closed", "syn_rcvd", ... */

#ifdef __cplusplus
}
#endif
#endif
