"""What a socket has ready now, without waiting, by poll(2): it takes any descriptor, where select(2) fails above
1024, a number a service holding many WebSocket clients and pooled connections reaches."""

import select

#: What makes a read worth trying: data, the end of the stream, an error or a closed descriptor (the read tells).
_READABLE = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR | select.POLLNVAL


def ready_now(fileno: int, *, write: bool = False) -> tuple[bool, bool]:
    """Whether `fileno` is readable now, and (when `write`) writable; a closed socket's -1 is neither."""
    if fileno < 0:
        return False, False
    poller = select.poll()
    poller.register(fileno, select.POLLIN | select.POLLPRI | (select.POLLOUT if write else 0))
    events = 0
    for _, mask in poller.poll(0):
        events |= mask
    return bool(events & _READABLE), bool(events & select.POLLOUT)
