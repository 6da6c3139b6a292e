/* SPDX-License-Identifier: MIT */
/*
 * The kfdsync commands, one file each (info.c is 'kfdsync info'). Each
 * takes its arguments with itself as argv[0] and returns the exit status.
 */
#ifndef KFDSYNC_CLI_COMMANDS_H
#define KFDSYNC_CLI_COMMANDS_H

int cmd_info(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_wait(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_monitor(int argc, char **argv);

#endif
