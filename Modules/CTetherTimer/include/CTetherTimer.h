// The Linux calls TetherClock's timer thread needs that Swift's Glibc module does not bring in: a timerfd on the
// boot-time clock (ContinuousClock's on Linux), and a thread's name. Empty elsewhere.
#pragma once
#include <stdint.h>

#if defined(__linux__)
/// A timerfd on CLOCK_BOOTTIME, closed on exec; -1 on failure (errno set).
int ctether_timer_create(void);
/// Arms `fd` to fire once at `deadline` nanoseconds of CLOCK_BOOTTIME (at once if past; never 0, which disarms).
int ctether_timer_arm(int fd, int64_t deadline);
/// Disarms `fd`: it does not fire until armed again.
int ctether_timer_disarm(int fd);
/// CLOCK_BOOTTIME now, in nanoseconds.
int64_t ctether_boot_time(void);
/// Names the calling thread (at most 15 characters are kept).
void ctether_name_thread(const char *name);
#endif
