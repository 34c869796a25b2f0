#include "serve/client_connection.h"

#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>

namespace mtdesk::serve {
namespace {

// The numeric host and port of a socket address, as cpp-httplib reports the request's.
bool numeric(const sockaddr_storage& a, socklen_t len, std::string& host, int& port) {
    char h[NI_MAXHOST], s[NI_MAXSERV];
    if (getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, h, sizeof h, s, sizeof s,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return false;
    host = h;
    port = std::atoi(s);
    return true;
}

}  // namespace

ClientConnection::ClientConnection(const std::string& remote_addr, int remote_port,
                                   int local_port) {
    // Only the descriptors this process has open: /proc/self/fd lists them.
    DIR* dir = opendir("/proc/self/fd");
    if (!dir) return;
    while (const dirent* e = readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || fd == dirfd(dir)) continue;
        struct stat st {};
        if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        sockaddr_storage peer{}, local{};
        socklen_t peer_len = sizeof peer, local_len = sizeof local;
        if (getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 ||
            getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &local_len) != 0)
            continue;
        std::string peer_host, local_host;
        int peer_port = 0, port = 0;
        if (numeric(peer, peer_len, peer_host, peer_port) &&
            numeric(local, local_len, local_host, port) && peer_port == remote_port &&
            port == local_port && peer_host == remote_addr) {
            fd_ = static_cast<int>(fd);
            break;
        }
    }
    closedir(dir);
}

bool ClientConnection::gone() const {
    if (fd_ < 0) return false;
    pollfd p{fd_, POLLRDHUP, 0};
    if (poll(&p, 1, 0) <= 0) return false;
    // POLLRDHUP: the client closed its side (clients send their whole request first, so a
    // half-closed connection is one whose client has given up); POLLHUP / POLLERR: reset.
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

}  // namespace mtdesk::serve
