#include "interop/chakra_trace.h"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <string>

namespace preflight {
namespace {

// Protobuf wire-format pieces, written by hand so the tests do not depend on our writer.
std::string varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string field(int number, const std::string& bytes) {  // length-delimited
  return varint(static_cast<uint64_t>(number) << 3 | 2) + varint(bytes.size()) + bytes;
}
std::string vfield(int number, uint64_t v) {
  return varint(static_cast<uint64_t>(number) << 3) + varint(v);
}
std::string message(const std::string& body) { return varint(body.size()) + body; }
const std::string kMetadata = message(field(1, "0.0.4"));

// ASTRA-sim's examples/workload/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et, byte for
// byte as the reference's annotated dump gives it (81 bytes).
std::string astra_all_reduce() {
  std::string node = field(2, "all_reduce_4npus_1MB") + vfield(3, 7);
  node += field(10, field(1, "is_cpu_op") + vfield(27, 0));
  node += field(10, field(1, "comm_type") + vfield(9, 0));
  node += field(10, field(1, "comm_size") + vfield(9, 1048576));
  return kMetadata + message(node);
}

TEST(ChakraTrace, ReadsAstraSimAllReduceExample) {
  const std::string bytes = astra_all_reduce();
  ASSERT_EQ(bytes.size(), 81u);
  StatusOr<ChakraTrace> t = parse_chakra_trace(bytes, "all_reduce.0.et");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->version, "0.0.4");
  ASSERT_EQ(t->nodes.size(), 1u);
  const ChakraNode& n = t->nodes[0];
  EXPECT_EQ(n.id, 0u);
  EXPECT_EQ(n.name, "all_reduce_4npus_1MB");
  EXPECT_EQ(n.type, ChakraNodeType::kColl);
  EXPECT_FALSE(n.is_cpu_op);
  EXPECT_EQ(n.comm_type, static_cast<int>(ChakraCommType::kAllReduce));
  EXPECT_EQ(n.comm_size, 1048576);
  EXPECT_EQ(n.offset, static_cast<int64_t>(kMetadata.size()));
}

TEST(ChakraTrace, AcceptsPackedAndUnpackedDepsAndAnyIntegerAttributeType) {
  std::string a = vfield(1, 0) + field(2, "a") + vfield(3, 4) + vfield(7, 10);
  // Packed data_deps (wire type 2), as proto3 writes them; comm_size as uint64_val.
  std::string b = vfield(1, 1) + field(2, "b") + vfield(3, 4) + field(5, varint(0));
  b += field(10, field(1, "tensor_size") + vfield(13, 4096));
  // Unpacked data_deps (wire type 0) and an int32 num_ops.
  std::string c = vfield(1, 2) + field(2, "c") + vfield(3, 4) + vfield(5, 0) + vfield(5, 1);
  c += field(10, field(1, "num_ops") + vfield(7, 1000));
  StatusOr<ChakraTrace> t =
      parse_chakra_trace(kMetadata + message(a) + message(b) + message(c), "deps.et");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->nodes.size(), 3u);
  EXPECT_EQ(t->nodes[0].duration_micros, 10u);
  EXPECT_EQ(t->nodes[1].data_deps, std::vector<uint64_t>{0});
  EXPECT_EQ(t->nodes[1].tensor_size, 4096);
  EXPECT_EQ(t->nodes[2].data_deps, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(t->nodes[2].num_ops, 1000);
}

TEST(ChakraTrace, WriteThenReadKeepsEveryField) {
  ChakraTrace t;
  ChakraNode cpu;
  cpu.id = 7;
  cpu.name = "launch";
  cpu.type = ChakraNodeType::kComp;
  cpu.is_cpu_op = true;
  cpu.duration_micros = 3;
  cpu.duration_ps = 3141592;
  t.nodes.push_back(cpu);
  ChakraNode coll;
  coll.id = 9;
  coll.name = "tp.allreduce";
  coll.type = ChakraNodeType::kColl;
  coll.data_deps = {7};
  coll.ctrl_deps = {7};
  coll.comm_type = static_cast<int>(ChakraCommType::kReduceScatter);
  coll.comm_size = int64_t{3} << 33;
  coll.pg_name = "12";
  coll.stream = 1;
  coll.category = "tp";
  t.nodes.push_back(coll);
  ChakraNode send;
  send.id = 10;
  send.name = "pp.send.act";
  send.type = ChakraNodeType::kSend;
  send.comm_dst = 4;
  send.comm_tag = 77;
  send.comm_size = 1 << 20;
  send.data_deps = {9};
  t.nodes.push_back(send);
  StatusOr<ChakraTrace> back = parse_chakra_trace(write_chakra_trace(t), "rt.et");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->nodes.size(), 3u);
  EXPECT_EQ(back->nodes[0].duration_ps, 3141592);
  EXPECT_TRUE(back->nodes[0].is_cpu_op);
  const ChakraNode& c = back->nodes[1];
  EXPECT_EQ(c.id, 9u);
  EXPECT_EQ(c.data_deps, std::vector<uint64_t>{7});
  EXPECT_EQ(c.ctrl_deps, std::vector<uint64_t>{7});
  EXPECT_EQ(c.comm_type, static_cast<int>(ChakraCommType::kReduceScatter));
  EXPECT_EQ(c.comm_size, int64_t{3} << 33);
  EXPECT_EQ(c.pg_name, "12");
  EXPECT_EQ(c.stream, 1);
  EXPECT_EQ(c.category, "tp");
  EXPECT_EQ(back->nodes[2].comm_dst, 4);
  EXPECT_EQ(back->nodes[2].comm_tag, 77);
  EXPECT_EQ(back->nodes[2].comm_src, -1);
}

TEST(ChakraTrace, ReadsGzipCompressedFiles) {
  const std::string plain = astra_all_reduce();
  std::string gz;
  {
    google::protobuf::io::StringOutputStream raw(&gz);
    google::protobuf::io::GzipOutputStream::Options o;
    o.format = google::protobuf::io::GzipOutputStream::GZIP;
    google::protobuf::io::GzipOutputStream out(&raw, o);
    void* data = nullptr;
    int size = 0;
    ASSERT_TRUE(out.Next(&data, &size));
    ASSERT_GE(size, static_cast<int>(plain.size()));
    std::copy(plain.begin(), plain.end(), static_cast<char*>(data));
    out.BackUp(size - static_cast<int>(plain.size()));
    ASSERT_TRUE(out.Close());
  }
  ASSERT_EQ(static_cast<uint8_t>(gz[0]), 0x1f);
  StatusOr<ChakraTrace> t = parse_chakra_trace(gz, "all_reduce.0.et.gz");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->nodes.at(0).comm_size, 1048576);
  StatusOr<ChakraTrace> bad = parse_chakra_trace(gz.substr(0, 12), "cut.et.gz");
  EXPECT_FALSE(bad.ok());
}

void expect_error(const std::string& bytes, const std::string& want) {
  StatusOr<ChakraTrace> t = parse_chakra_trace(bytes, "bad.et");
  ASSERT_FALSE(t.ok()) << "expected an error containing: " << want;
  EXPECT_NE(t.status().message().find(want), std::string::npos) << t.status().message();
  EXPECT_EQ(t.status().message().rfind("bad.et: ", 0), 0u) << t.status().message();
}

TEST(ChakraTrace, CorruptFilesGiveErrorsWithOffsetOrNode) {
  const std::string ok = astra_all_reduce();
  expect_error("", "empty file");
  expect_error(ok.substr(0, ok.size() - 5), "byte offset 8: message length 72 runs past the end");
  expect_error(kMetadata + "\xff\xff", "byte offset 8: truncated length prefix");
  expect_error(kMetadata + message(std::string("\x0a\x05") + "ab"),
               "node #0 (byte offset 8): not a valid Node");
  expect_error(kMetadata + message(vfield(1, 3) + vfield(3, 42)), "unknown node type 42");
  expect_error(kMetadata + message(vfield(1, 1) + vfield(3, 4) + vfield(5, 9)),
               "node 1 ('', byte offset 8): data_deps names node 9, which the file does not hold");
  expect_error(kMetadata + message(vfield(1, 1)) + message(vfield(1, 1)),
               "id 1 is also used by node 1");
  expect_error(
      kMetadata + message(vfield(1, 0) + vfield(5, 1)) + message(vfield(1, 1) + vfield(5, 0)),
      "its dependencies form a cycle");
  expect_error(
      kMetadata + message(vfield(3, 7) + field(10, field(1, "comm_size") + field(29, "big"))),
      "attribute comm_size: expected an integer value");
  expect_error(kMetadata + message(vfield(3, 7) + field(10, field(1, "comm_type") + vfield(9, 12))),
               "attribute comm_type: 12 is out of range [0, 9]");
}

TEST(ChakraTrace, GroupsJsonRoundTripAndErrors) {
  ChakraGroups g{{"1", {0, 1, 2, 3}}, {"2", {4, 6}}};
  StatusOr<ChakraGroups> back = parse_chakra_groups(write_chakra_groups(g), "g.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, g);
  EXPECT_NE(parse_chakra_groups("{\"1\": [0, 0]}", "g.json")
                .status()
                .message()
                .find("a rank appears twice"),
            std::string::npos);
  EXPECT_NE(parse_chakra_groups("[1]", "g.json").status().message().find("expected an object"),
            std::string::npos);
  EXPECT_NE(
      parse_chakra_groups("{\"1\": [-1]}", "g.json").status().message().find("expected a rank"),
      std::string::npos);
  EXPECT_FALSE(parse_chakra_groups("{", "g.json").ok());
}

TEST(ChakraTrace, WorkloadFilesRoundTripAndMissingRankZeroIsAnError) {
  const std::string prefix = ::testing::TempDir() + "chakra_trace_test";
  ChakraWorkload w;
  for (int r = 0; r < 3; ++r) {
    ChakraTrace t;
    ChakraNode n;
    n.type = ChakraNodeType::kColl;
    n.name = "ar";
    n.comm_type = 0;
    n.comm_size = 1024;
    n.pg_name = "1";
    t.nodes.push_back(n);
    w.ranks.push_back(t);
  }
  w.groups = {{"1", {0, 1, 2}}};
  ASSERT_TRUE(write_chakra_workload(w, prefix).ok());
  StatusOr<ChakraWorkload> back = load_chakra_workload(prefix);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->ranks.size(), 3u);
  EXPECT_EQ(back->groups, w.groups);
  StatusOr<ChakraWorkload> missing = load_chakra_workload(prefix + "_none");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("_none.0.et: cannot open"), std::string::npos);
}

TEST(ChakraTrace, ProcessGroupsFromPyTorchMetadataNodes) {
  const std::string prefix = ::testing::TempDir() + "chakra_metadata_test";
  ChakraWorkload w;
  ChakraTrace t;
  ChakraNode meta;
  meta.type = ChakraNodeType::kMetadata;
  meta.name = "[pytorch|profiler|execution_trace|process_group]";
  meta.inputs_values = R"([{"pg_name": "0", "pg_desc": "default_pg", "ranks": [0, 1]},)"
                       R"( {"pg_name": "3", "ranks": [1, 0]}])";
  t.nodes.push_back(meta);
  w.ranks = {t, t};
  ASSERT_TRUE(write_chakra_workload(w, prefix).ok());
  StatusOr<ChakraWorkload> back = load_chakra_workload(prefix);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->groups.at("3"), (std::vector<int>{0, 1}));
  EXPECT_EQ(back->groups.at("0"), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace preflight
