#include "serve/client_connection.h"

#include <poll.h>

namespace mtdesk::serve {

int ClientConnection::poll_events() const {
    if (fd_ < 0) return 0;
    pollfd p{fd_, POLLRDHUP, 0};
    return poll(&p, 1, 0) > 0 ? p.revents : 0;
}

bool ClientConnection::gone() const {
    // POLLERR: a reset (also the answer to a write after the client closed); POLLHUP: both
    // directions are shut. POLLRDHUP alone is only the end of the client's request.
    return (poll_events() & (POLLERR | POLLHUP)) != 0;
}

bool ClientConnection::stopped_sending() const {
    return (poll_events() & (POLLRDHUP | POLLERR | POLLHUP)) != 0;
}

}  // namespace mtdesk::serve
