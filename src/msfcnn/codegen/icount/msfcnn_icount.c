/*
 * A QEMU TCG plugin that counts executed guest instructions exactly, for msfcnn's icount.py.
 *
 *   qemu-system-... -plugin file=msfcnn_icount.so,out=EVENTS,mark=0xADDR[,mark=0xADDR...][,vectors=FILE]
 *
 * Every instruction adds one to a 64-bit counter (an inline add that QEMU emits before the
 * instruction: no call, so the run stays fast). Each time an instruction at a marked address
 * executes, the plugin appends "<mark index> <counter> <vector counter>" to EVENTS. The vector
 * counter counts the instructions at the addresses FILE lists (hexadecimal, one a line: the vector
 * instructions icount.py found in the program's disassembly), the same way; without FILE it stays 0. The difference of two events is
 * then the number of instructions executed between them, independent of where QEMU's translation
 * blocks start or end, of how often they are retranslated, and of whether QEMU runs the inline add
 * before or after the mark's callback (it is the same order for every instruction, so it cancels).
 * icount.py marks the entry of msfcnn_invoke, the instruction its caller returns to, and its calls
 * of the block functions.
 *
 * Built by the project with the host compiler (icount.py). Debian's QEMU ships the plugin loader
 * but not its header, so the few declarations this file uses are written out below from the
 * documented plugin API, version 1 (QEMU 4.2 to 8.x): the types are opaque pointers, integers and
 * two enums whose first values are the ones used here.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plugin API's declarations (QEMU's include/qemu/qemu-plugin.h, API version 1) ---- */

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;  /* only passed through */

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_op op,
                                                void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

#define EXPORT __attribute__((visibility("default")))

/* ---- the plugin ---- */

#define MAX_MARKS 4096 /* icount.py's MAX_MARKS */

EXPORT int qemu_plugin_version = 1;

static uint64_t executed;  /* instructions executed so far (the guest has one vCPU) */
static uint64_t vectors_executed;  /* of them, at the addresses of vector_addresses */
static uint64_t marks[MAX_MARKS];
static size_t n_marks;
static uint64_t *vector_addresses;  /* sorted */
static size_t n_vector_addresses;
static FILE *events;

static void on_mark(unsigned int vcpu_index, void *userdata)
{
    (void)vcpu_index;
    /* Flushed at once: QEMU may leave through a path that skips the C library's exit handlers. */
    fprintf(events, "%u %" PRIu64 " %" PRIu64 "\n", (unsigned)(uintptr_t)userdata, executed, vectors_executed);
    fflush(events);
}

static int compare_addresses(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int is_vector(uint64_t vaddr)
{
    return n_vector_addresses > 0 && bsearch(&vaddr, vector_addresses, n_vector_addresses, sizeof(uint64_t),
                                             compare_addresses) != NULL;
}

/* Reads the vector instructions' addresses; 0 on success. */
static int read_vector_addresses(const char *path)
{
    size_t capacity = 1024;
    unsigned long long address;
    FILE *file = fopen(path, "r");
    vector_addresses = malloc(capacity * sizeof(uint64_t));
    if (file == NULL || vector_addresses == NULL) {
        return -1;
    }
    while (fscanf(file, "%llx", &address) == 1) {
        if (n_vector_addresses == capacity) {
            uint64_t *grown = realloc(vector_addresses, 2 * capacity * sizeof(uint64_t));
            if (grown == NULL) {
                fclose(file);
                return -1;
            }
            vector_addresses = grown;
            capacity *= 2;
        }
        vector_addresses[n_vector_addresses++] = address;
    }
    fclose(file);
    qsort(vector_addresses, n_vector_addresses, sizeof(uint64_t), compare_addresses);
    return 0;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t i, m, n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    for (i = 0; i < n; ++i) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        const uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &executed, 1);
        if (is_vector(vaddr)) {
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &vectors_executed, 1);
        }
        for (m = 0; m < n_marks; ++m) {
            if (marks[m] == vaddr) {
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)m);
            }
        }
    }
}

static void on_qemu_exit(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    fprintf(events, "end %" PRIu64 "\n", executed);
    fclose(events);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    const char *out = NULL;
    int i;
    (void)info;
    for (i = 0; i < argc; ++i) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            out = argv[i] + 4;
        } else if (strncmp(argv[i], "mark=", 5) == 0) {
            if (n_marks == MAX_MARKS) {
                fprintf(stderr, "msfcnn_icount: more than %d marks\n", MAX_MARKS);
                return -1;
            }
            marks[n_marks++] = strtoull(argv[i] + 5, NULL, 0);
        } else if (strncmp(argv[i], "vectors=", 8) == 0) {
            if (read_vector_addresses(argv[i] + 8) != 0) {
                fprintf(stderr, "msfcnn_icount: cannot read the vector instructions' addresses (%s)\n", argv[i] + 8);
                return -1;
            }
        } else {
            fprintf(stderr, "msfcnn_icount: unknown argument %s (expected out=PATH, mark=ADDRESS, vectors=PATH)\n", argv[i]);
            return -1;
        }
    }
    if (out == NULL || (events = fopen(out, "w")) == NULL) {
        fprintf(stderr, "msfcnn_icount: cannot write the events file (out=%s)\n", out ? out : "missing");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
    return 0;
}
