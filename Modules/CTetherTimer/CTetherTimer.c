#define _GNU_SOURCE
#include "CTetherTimer.h"

#if defined(__linux__)
#include <pthread.h>
#include <sys/timerfd.h>
#include <time.h>

int ctether_timer_create(void) {
    return timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC);
}

int ctether_timer_arm(int fd, int64_t deadline) {
    if (deadline < 1) deadline = 1;
    struct itimerspec value = {0};
    value.it_value.tv_sec = (time_t)(deadline / 1000000000);
    value.it_value.tv_nsec = (long)(deadline % 1000000000);
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &value, NULL);
}

int ctether_timer_disarm(int fd) {
    struct itimerspec value = {0};
    return timerfd_settime(fd, 0, &value, NULL);
}

int64_t ctether_boot_time(void) {
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void ctether_name_thread(const char *name) {
    pthread_setname_np(pthread_self(), name);
}
#endif
