//===- CoordinatorWaitTest.cpp - A rendezvous that waits for a missing task -===//
//
// A task started with other shared flags (--steps) is refused at
// registration. A task waiting at the rendezvous for a peer that was never
// started names that peer and its address, not the key it waited for; and after
// a while (kWaitNoticeAfter by default) it says once whom it is waiting for. A coordinator on
// 127.0.0.1 in this process, one task registered of two.
//
//===----------------------------------------------------------------------===//

#include "runtime/cluster/ClusterSpec.h"
#include "runtime/cluster/CoordinatorClient.h"
#include "runtime/cluster/CoordinatorServer.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace kiln::cluster;

namespace {

/// A port of 127.0.0.1 free a moment ago.
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&address), size) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &size) != 0)
    return 0;
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST(CoordinatorWaitTest, NamesTheTaskThatNeverRegistered) {
  int chief = freePort(), other = freePort();
  ASSERT_TRUE(chief && other && chief != other);
  std::string chiefAddress = "127.0.0.1:" + std::to_string(chief);
  std::string otherAddress = "127.0.0.1:" + std::to_string(other);
  ClusterSpec spec;
  std::string error;
  ASSERT_TRUE(parseClusterSpec("{\"cluster\": {\"worker\": [\"" + chiefAddress + "\", \"" +
                                   otherAddress + "\"]}, \"task\": {\"type\": \"worker\", "
                                                  "\"index\": 0}}",
                               "test", spec, error))
      << error;
  std::map<std::string, std::string> settings = {{"--steps", "20"}, {"--seed", "0"}};
  CoordinatorOptions options{spec, chiefAddress, "token", 7, 1, {}, settings};
  std::unique_ptr<CoordinatorServer> server = CoordinatorServer::start(options, error);
  ASSERT_TRUE(server) << error;
  CoordinatorClient client(chiefAddress, spec.coordinatorTask(), spec.task, "token", {});
  ASSERT_TRUE(client.registerTask(7, 1, std::chrono::seconds(10), error, settings)) << error;
  std::vector<std::string> notices;
  auto noticeAfter = std::chrono::milliseconds(1000);
  client.onLongWait([&](const std::string &line) { notices.push_back(line); }, noticeAfter);

  EXPECT_FALSE(client.wait({"gloo/shm/host/1"}, std::chrono::milliseconds(300), error));
  EXPECT_EQ(error, "waited 300 ms for worker:1 at " + otherAddress +
                       ", which never registered with the coordinator (not started, or started "
                       "with another cluster spec)");
  EXPECT_TRUE(notices.empty()); // Shorter than noticeAfter.

  auto longer = noticeAfter + std::chrono::milliseconds(1500);
  EXPECT_FALSE(client.wait({"gloo/shm/host/1"}, longer, error));
  ASSERT_EQ(notices.size(), 1u);
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(longer).count();
  EXPECT_EQ(notices[0], "waiting for worker:1 at " + otherAddress +
                            " to register with the coordinator (for up to " +
                            std::to_string(seconds) + " s in all)");
  // A key that is there is no wait at all.
  ASSERT_TRUE(client.set("present", "1", error)) << error;
  EXPECT_TRUE(client.wait({"present"}, std::chrono::milliseconds(300), error)) << error;

  // A task started with another --steps is refused, naming both values.
  TaskId worker1{"worker", 1};
  CoordinatorClient late(chiefAddress, spec.coordinatorTask(), worker1, "token", {});
  EXPECT_FALSE(late.registerTask(7, 1, std::chrono::seconds(10), error,
                                 {{"--steps", "5"}, {"--seed", "0"}}));
  EXPECT_NE(error.find("worker:1 was started with --steps 5, the chief with --steps 20"),
            std::string::npos)
      << error;
  // ... and the others' waits say why it never joined.
  EXPECT_FALSE(client.wait({"gloo/shm/host/1"}, std::chrono::milliseconds(300), error));
  EXPECT_EQ(error, "waited 300 ms for worker:1 at " + otherAddress +
                       " (refused: worker:1 was started with --steps 5, the chief with --steps "
                       "20), which did not register with the coordinator");
  client.leave();
}

} // namespace
