// Mirroring over a device-like upstream (a VirtualResource in device
// space): FULL keeps the buffer on the device and a host mirror of the same
// size; HOST_ONLY takes the buffer from the host and nothing from the device.
#include <gtest/gtest.h>

#include "memtrail/alloc/virtual_resource.hpp"
#include "memtrail/alloc/workspace.hpp"

namespace {

using namespace memtrail::alloc;

TEST(WorkspaceMirror, FullMirrorsADeviceBufferOnTheHost) {
  VirtualResource device(0, "virtual device", memtrail::MemorySpace::device, 0);
  {
    Workspace ws(device, WorkspaceConfiguration::parse("initialSize:4096,policyAllocation:STRICT"),
                 "D");
    EXPECT_EQ(ws.stats().current_size, 4096u);
    EXPECT_EQ(device.bytes_in_use(), 4096u);
    EXPECT_EQ(ws.stats().mirror_bytes, 4096u);
    ws.enter();
    ws.alloc(100);  // a bump in the device buffer: nothing more from either side
    EXPECT_EQ(device.bytes_in_use(), 4096u);
    ws.close();
  }
  EXPECT_EQ(device.bytes_in_use(), 0u);  // buffer and mirror gone with the workspace
}

TEST(WorkspaceMirror, HostOnlyTakesNothingFromTheDevice) {
  VirtualResource device(0, "virtual device", memtrail::MemorySpace::device, 0);
  Workspace ws(device,
               WorkspaceConfiguration::parse(
                   "initialSize:4096,policyAllocation:STRICT,policyMirroring:HOST_ONLY"),
               "H");
  EXPECT_EQ(ws.stats().current_size, 4096u);
  EXPECT_EQ(device.bytes_in_use(), 0u);
  EXPECT_EQ(ws.stats().mirror_bytes, 0u);
  ws.enter();
  void* p = ws.alloc(256);
  static_cast<char*>(p)[255] = 1;  // host memory: writable
  ws.close();
}

}  // namespace
