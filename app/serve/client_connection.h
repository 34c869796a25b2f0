#pragma once
// Whether the client of a request is still there, from the socket the request came on, looked
// at without reading (pipelined requests stay where they are). A client that has finished
// sending cannot be told from one that has gone by the socket alone: a half-closed client
// (shutdown(SHUT_WR) after its request) still reads the answer, so only a reset or a failed
// write means gone; a stream finds out which by writing (an SSE comment), see endpoints.cpp.

namespace mtdesk::serve {

/// The accepted socket of one HTTP request, for watching it from the thread answering it.
class ClientConnection {
  public:
    /// Watches `fd` (not owned; it must stay open while this object is used). A negative fd:
    /// a connection that is never reported gone.
    explicit ClientConnection(int fd) : fd_(fd) {}

    /// True once the connection is known to be broken: reset by the client, or refused by its
    /// side after a write (the client had closed it). Never blocks; reads nothing.
    bool gone() const;
    /// True once the client has finished sending (it closed the connection, or half-closed it
    /// and still reads). Never blocks; reads nothing.
    bool stopped_sending() const;

  private:
    int poll_events() const;

    int fd_ = -1;
};

}  // namespace mtdesk::serve
