/* Links with the object made from funcs.clif (link_and_run.sh) and checks
 * what its functions compute. With DATA_IN_OBJECT the object also defines
 * `counter` and `table` (made through ObjectModule by make_object); else
 * this program defines them and the object refers to them. */
#include <stdint.h>
#include <stdio.h>

int64_t triple(int64_t);
int64_t call_both(int64_t);
int32_t classify(int32_t);
int64_t bump(int64_t);
int64_t call_table(int64_t, int64_t);

int64_t host_add7(int64_t x) { return x + 7; }

typedef int64_t (*fn_t)(int64_t);
#ifdef DATA_IN_OBJECT
extern int64_t counter;
extern const fn_t table[2];
#else
int64_t counter = 5;
const fn_t table[2] = {triple, host_add7};
#endif

static int failures;
#define CHECK(c)                                                       \
    do {                                                               \
        if (!(c)) {                                                    \
            fprintf(stderr, "main.c:%d: failed: %s\n", __LINE__, #c); \
            ++failures;                                                \
        }                                                              \
    } while (0)

int main(void) {
    CHECK(triple(4) == 12);
    CHECK(triple(-5) == -15);
    CHECK(call_both(10) == 47);
    CHECK(classify(0) == 10);
    CHECK(classify(1) == 20);
    CHECK(classify(2) == 30);
    CHECK(classify(3) == 10);
    CHECK(classify(4) == 99);
    CHECK(classify(-1) == 99);
    CHECK(counter == 5);
    CHECK(bump(3) == 8);
    CHECK(counter == 8);
    counter = 100;
    CHECK(bump(1) == 101);
    CHECK(table[0] == triple);
    CHECK(table[1] == host_add7);
    CHECK(table[0](2) == 6);
    CHECK(call_table(0, 5) == 15);
    CHECK(call_table(1, 5) == 12);
    if (failures) return 1;
    printf("ok\n");
    return 0;
}
