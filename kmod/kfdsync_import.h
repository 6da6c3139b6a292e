/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: sync_file imports, a fence's end acted on for its importer.
 */

#ifndef KFDSYNC_IMPORT_H
#define KFDSYNC_IMPORT_H

struct kfdsync_ctx;
struct kfdsync_import;

int kfdsync_import_check(const void *data);
int kfdsync_import(struct kfdsync_ctx *ctx, const struct kfdsync_import *args);
void kfdsync_ctx_imports_fini(struct kfdsync_ctx *ctx);
int kfdsync_import_init(void);
void kfdsync_import_exit(void);

#endif /* KFDSYNC_IMPORT_H */
