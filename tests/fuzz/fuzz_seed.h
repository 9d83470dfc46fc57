/* fuzz_seed.h — one seed file for a fuzz target that writes its own (binary)
 * seeds: run with SHAPE_FUZZ_WRITE_SEEDS=DIR after each build
 * (shape_fuzz_self_seeds in CMakeLists.txt). Exits 1 naming the file when
 * it cannot be written. */
#ifndef SHAPE_FUZZ_SEED_H
#define SHAPE_FUZZ_SEED_H

#include <stdio.h>
#include <stdlib.h>

static inline void fuzz_write_seed(const char *target, const char *dir, const char *name, const void *bytes,
                                   size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(bytes, 1, len, fp) != len || fclose(fp) != 0) {
        fprintf(stderr, "%s: cannot write %s\n", target, path);
        exit(1);
    }
}

#endif
