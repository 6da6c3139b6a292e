/* SPDX-License-Identifier: MIT */
/* kfdsync-kms: error messages on stderr, prefixed with the program's name. */
#ifndef KFDSYNC_KMS_MESSAGE_H
#define KFDSYNC_KMS_MESSAGE_H

void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* KFDSYNC_KMS_MESSAGE_H */
