/* A TCG plugin for qemu-user that counts guest instructions executed and
 * records the count each time the guest enters one address (dp_cost's
 * rt_cost_mark), so that instructions can be attributed to the code
 * between two marks.
 *
 *   qemu-mips64 -plugin build/.../rt_insn_plugin.so,mark=0x120001234,out=marks.txt ./dp_cost ...
 *
 * out gets one line per mark, the number of instructions executed since
 * the program started (translation blocks are counted whole, when entered:
 * the same rule at every mark, so differences between marks are exact and
 * deterministic), and a last line "total N".
 *
 * Debian's qemu-user (7.2) is built with plugin support but ships no
 * qemu-plugin.h (no package does), so the few declarations used are
 * written here from qemu's include/qemu/qemu-plugin.h, API version 1 (the
 * version qemu 7.2 implements; qemu checks qemu_plugin_version at load and
 * refuses a plugin it does not support). No qemu code is copied.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* not read */
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = 1;

static uint64_t executed;  /* instructions of every translation block entered */
static uint64_t mark_addr; /* guest address of the mark function */
static uint64_t *marks;    /* executed at each mark */
static size_t n_marks, cap_marks;
static char out_path[4096];

static void on_mark(unsigned int vcpu, void *u)
{
    (void)vcpu;
    (void)u;
    if (n_marks == cap_marks) {
        cap_marks = cap_marks ? 2 * cap_marks : 256;
        marks = realloc(marks, cap_marks * sizeof *marks);
        if (!marks) abort();
    }
    marks[n_marks++] = executed;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, n);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        if (qemu_plugin_insn_vaddr(insn) == mark_addr)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
}

static void on_program_exit(qemu_plugin_id_t id, void *u)
{
    (void)id;
    (void)u;
    FILE *f = fopen(out_path, "w");
    if (!f) {
        fprintf(stderr, "rt_insn_plugin: cannot write %s\n", out_path);
        return;
    }
    for (size_t i = 0; i < n_marks; i++) fprintf(f, "%" PRIu64 "\n", marks[i]);
    fprintf(f, "total %" PRIu64 "\n", executed);
    fclose(f);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "mark=", 5) == 0) mark_addr = strtoull(argv[i] + 5, NULL, 0);
        else if (strncmp(argv[i], "out=", 4) == 0) snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
        else {
            fprintf(stderr, "rt_insn_plugin: unknown argument %s (mark=ADDR, out=FILE)\n", argv[i]);
            return -1;
        }
    }
    if (!mark_addr || !out_path[0]) {
        fprintf(stderr, "rt_insn_plugin: mark=ADDR and out=FILE are required\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_program_exit, NULL);
    return 0;
}
