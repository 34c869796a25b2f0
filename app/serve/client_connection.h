#pragma once
// Whether the client of a request is still there. cpp-httplib (0.11) gives a handler no access
// to its connection, and a write fails only once the client has gone and the next piece is
// sent; a request whose job is still queued, or being prefilled, writes nothing for a while.
// So the connection's socket is found by its address pair, and looked at without reading.

#include <string>

namespace mtdesk::serve {

/// The accepted socket of one HTTP request, for watching it from the thread answering it.
class ClientConnection {
  public:
    /// Finds the socket of this process connected from `remote_addr`:`remote_port` (numeric, as
    /// getnameinfo writes them) to local port `local_port`. Not found (which should not
    /// happen): a connection that is never reported gone.
    ClientConnection(const std::string& remote_addr, int remote_port, int local_port);

    /// True once the client has closed or reset the connection. Never blocks; reads nothing
    /// (pipelined requests stay in the socket for the server).
    bool gone() const;
    /// Whether the socket was found.
    bool watched() const noexcept { return fd_ >= 0; }

  private:
    int fd_ = -1;
};

}  // namespace mtdesk::serve
