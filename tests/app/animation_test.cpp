// The animation encoders, read back by the libraries that decode them: a GIF of flat-coloured frames decodes to
// the same number of frames, size, colours and delay; an MP4 opens as H.264 with every frame and the size.
// A format this build lacks is refused with the package to install.
#include "app/io/animation.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kernels/common/input_error.h"

#ifdef FLASHVIZ_HAVE_GIF
#include <gif_lib.h>
#endif
#ifdef FLASHVIZ_HAVE_MP4
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}
#endif

namespace flashviz {
namespace {

constexpr int kWidth = 64, kHeight = 48, kFrames = 5;

// Frame k: a flat colour that changes with k, and a white square that moves with it.
RgbaImage TestFrame(int k) {
  RgbaImage image;
  image.Resize(kWidth, kHeight, IM_COL32(40 * k, 200 - 30 * k, 90, 255));
  for (int y = 4; y < 12; ++y)
    for (int x = 4 + 8 * k; x < 12 + 8 * k; ++x) image.pixels[static_cast<std::size_t>(y * kWidth + x)] = IM_COL32_WHITE;
  return image;
}

std::string Encode(AnimationFormat format, double fps) {
  auto encoder = OpenAnimationEncoder(format, kWidth, kHeight, fps);
  for (int k = 0; k < kFrames; ++k) encoder->Add(TestFrame(k));
  return encoder->Finish();
}

TEST(Animation, FormatsFollowTheFileName) {
  EXPECT_EQ(AnimationFormatFor("a.gif"), AnimationFormat::kGif);
  EXPECT_EQ(AnimationFormatFor("A.MP4"), AnimationFormat::kMp4);
  EXPECT_FALSE(AnimationFormatFor("a.png").has_value());
  EXPECT_FALSE(AnimationFormatFor("gif").has_value());
}

#ifdef FLASHVIZ_HAVE_GIF
struct Reader {
  const std::string* bytes;
  std::size_t at = 0;
};
int ReadFromString(GifFileType* gif, GifByteType* out, int length) {
  auto* r = static_cast<Reader*>(gif->UserData);
  const std::size_t n = std::min(static_cast<std::size_t>(length), r->bytes->size() - r->at);
  std::memcpy(out, r->bytes->data() + r->at, n);
  r->at += n;
  return static_cast<int>(n);
}

TEST(Animation, AGifDecodesToTheFramesWithTheirColoursAndDelay) {
  const std::string bytes = Encode(AnimationFormat::kGif, 4);
  ASSERT_EQ(bytes.substr(0, 6), "GIF89a");
  Reader reader{&bytes};
  int error = 0;
  GifFileType* gif = DGifOpen(&reader, &ReadFromString, &error);
  ASSERT_NE(gif, nullptr);
  ASSERT_EQ(DGifSlurp(gif), GIF_OK);
  EXPECT_EQ(gif->SWidth, kWidth);
  EXPECT_EQ(gif->SHeight, kHeight);
  ASSERT_EQ(gif->ImageCount, kFrames);
  for (int k = 0; k < kFrames; ++k) {
    const SavedImage& frame = gif->SavedImages[k];
    GraphicsControlBlock control{};
    ASSERT_EQ(DGifSavedExtensionToGCB(gif, k, &control), GIF_OK);
    EXPECT_EQ(control.DelayTime, 25);  // 4 fps: a quarter second, in hundredths
    const ColorMapObject* map = frame.ImageDesc.ColorMap ? frame.ImageDesc.ColorMap : gif->SColorMap;
    ASSERT_NE(map, nullptr);
    const auto colour_at = [&](int x, int y) { return map->Colors[frame.RasterBits[y * kWidth + x]]; };
    const ImU32 expected = TestFrame(k).pixels[static_cast<std::size_t>(40 * kWidth + 60)];
    const GifColorType background = colour_at(60, 40), square = colour_at(6 + 8 * k, 6);
    // Two flat colours need no dithering: the quantized palette holds them within a step or two.
    EXPECT_NEAR(background.Red, expected & 0xFF, 8) << "frame " << k;
    EXPECT_NEAR(background.Green, (expected >> 8) & 0xFF, 8) << "frame " << k;
    EXPECT_NEAR(background.Blue, (expected >> 16) & 0xFF, 8) << "frame " << k;
    EXPECT_GE(square.Red, 247);
    EXPECT_GE(square.Green, 247);
    EXPECT_GE(square.Blue, 247);
  }
  DGifCloseFile(gif, &error);
}
#endif

#ifdef FLASHVIZ_HAVE_MP4
struct Buffer {
  const std::string* bytes;
  std::int64_t at = 0;
};
int ReadPacket(void* opaque, std::uint8_t* out, int length) {
  auto* b = static_cast<Buffer*>(opaque);
  const auto n = std::min<std::int64_t>(length, static_cast<std::int64_t>(b->bytes->size()) - b->at);
  if (n <= 0) return AVERROR_EOF;
  std::memcpy(out, b->bytes->data() + b->at, static_cast<std::size_t>(n));
  b->at += n;
  return static_cast<int>(n);
}
std::int64_t SeekTo(void* opaque, std::int64_t offset, int whence) {
  auto* b = static_cast<Buffer*>(opaque);
  const auto size = static_cast<std::int64_t>(b->bytes->size());
  if (whence & AVSEEK_SIZE) return size;
  b->at = (whence & ~AVSEEK_FORCE) == SEEK_CUR ? b->at + offset : (whence & ~AVSEEK_FORCE) == SEEK_END ? size + offset
                                                                                                       : offset;
  return b->at;
}

TEST(Animation, AnMp4OpensAsH264WithEveryFrame) {
  const std::string bytes = Encode(AnimationFormat::kMp4, 4);
  ASSERT_GT(bytes.size(), 100u);
  EXPECT_EQ(bytes.substr(4, 4), "ftyp");
  Buffer buffer{&bytes};
  auto* io_buffer = static_cast<unsigned char*>(av_malloc(4096));
  AVIOContext* io = avio_alloc_context(io_buffer, 4096, 0, &buffer, &ReadPacket, nullptr, &SeekTo);
  AVFormatContext* format = avformat_alloc_context();
  format->pb = io;
  ASSERT_EQ(avformat_open_input(&format, nullptr, nullptr, nullptr), 0);
  ASSERT_GE(avformat_find_stream_info(format, nullptr), 0);
  ASSERT_EQ(format->nb_streams, 1u);
  const AVCodecParameters* codec = format->streams[0]->codecpar;
  EXPECT_EQ(codec->codec_id, AV_CODEC_ID_H264);
  EXPECT_EQ(codec->width, kWidth);
  EXPECT_EQ(codec->height, kHeight);
  int packets = 0;
  AVPacket* packet = av_packet_alloc();
  while (av_read_frame(format, packet) >= 0) {
    ++packets;
    av_packet_unref(packet);
  }
  EXPECT_EQ(packets, kFrames);
  av_packet_free(&packet);
  avformat_close_input(&format);
  av_freep(&io->buffer);
  avio_context_free(&io);
}
#endif

TEST(Animation, BadRatesAndSizesAreRefused) {
  for (const AnimationFormat format : {AnimationFormat::kGif, AnimationFormat::kMp4}) {
    if (!AnimationUnavailableReason(format).empty()) {
      // A build without the library says which package brings it.
      EXPECT_NE(AnimationUnavailableReason(format).find("-dev"), std::string::npos);
      EXPECT_THROW(OpenAnimationEncoder(format, kWidth, kHeight, 4), InputError);
      continue;
    }
    EXPECT_THROW(OpenAnimationEncoder(format, kWidth, kHeight, 0), InputError);
    EXPECT_THROW(OpenAnimationEncoder(format, kWidth, kHeight, 1000), InputError);
    EXPECT_THROW(OpenAnimationEncoder(format, 1, kHeight, 4), InputError);
    auto encoder = OpenAnimationEncoder(format, kWidth, kHeight, 4);
    RgbaImage wrong;
    wrong.Resize(kWidth + 2, kHeight);
    EXPECT_THROW(encoder->Add(wrong), InputError);
  }
}

}  // namespace
}  // namespace flashviz
