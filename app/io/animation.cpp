// GIF through giflib and MP4 through FFmpeg's libraries, both into memory.
#include "app/io/animation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/common/input_error.h"

#ifdef FLASHVIZ_HAVE_GIF
#include <gif_lib.h>
#endif
#ifdef FLASHVIZ_HAVE_MP4
#include <dlfcn.h>

#include <type_traits>
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}
#endif

namespace flashviz {
namespace {

#ifdef FLASHVIZ_HAVE_GIF
class GifEncoder final : public AnimationEncoder {
 public:
  GifEncoder(int width, int height, double fps) : width_(width), height_(height) {
    // GIF counts delays in hundredths of a second; below 2 browsers slow the frame down to 10.
    delay_ = std::max(2, static_cast<int>(std::lround(100.0 / fps)));
    int error = 0;
    gif_ = EGifOpen(this, &GifEncoder::Append, &error);
    if (!gif_) throw InputError(std::string("giflib cannot start: ") + GifErrorString(error));
    EGifSetGifVersion(gif_, true);
    if (EGifPutScreenDesc(gif_, width, height, 8, 0, nullptr) == GIF_ERROR) Fail("the screen descriptor");
    // Loop forever (the NETSCAPE2.0 application extension), as a slide's animation should.
    static constexpr GifByteType kNetscape[] = {'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0'};
    static constexpr GifByteType kLoopForever[] = {1, 0, 0};
    if (EGifPutExtensionLeader(gif_, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
        EGifPutExtensionBlock(gif_, sizeof(kNetscape), kNetscape) == GIF_ERROR ||
        EGifPutExtensionBlock(gif_, sizeof(kLoopForever), kLoopForever) == GIF_ERROR ||
        EGifPutExtensionTrailer(gif_) == GIF_ERROR)
      Fail("the loop extension");
  }
  ~GifEncoder() override {
    if (gif_) EGifCloseFile(gif_, nullptr);
  }

  void Add(const RgbaImage& frame) override {
    const std::size_t n = static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_);
    if (frame.width != width_ || frame.height != height_) throw InputError("a frame of another size");
    std::vector<GifByteType> r(n), g(n), b(n), index(n);
    for (std::size_t k = 0; k < n; ++k) {
      const ImU32 p = frame.pixels[k];
      r[k] = static_cast<GifByteType>(p >> IM_COL32_R_SHIFT);
      g[k] = static_cast<GifByteType>(p >> IM_COL32_G_SHIFT);
      b[k] = static_cast<GifByteType>(p >> IM_COL32_B_SHIFT);
    }
    // giflib's median-cut quantizer: a palette of up to 256 colours per frame.
    ColorMapObject* map = GifMakeMapObject(256, nullptr);
    if (!map) throw InputError("giflib: out of memory for a colour map");
    int colours = 256;
    if (GifQuantizeBuffer(static_cast<unsigned>(width_), static_cast<unsigned>(height_), &colours, r.data(), g.data(),
                          b.data(), index.data(), map->Colors) == GIF_ERROR) {
      GifFreeMapObject(map);
      throw InputError("giflib could not quantize a frame to 256 colours");
    }
    GraphicsControlBlock control{};
    control.DisposalMode = DISPOSE_DO_NOT;
    control.DelayTime = delay_;
    control.TransparentColor = NO_TRANSPARENT_COLOR;
    GifByteType extension[4];
    const std::size_t length = EGifGCBToExtension(&control, extension);
    bool ok = EGifPutExtension(gif_, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(length), extension) != GIF_ERROR &&
              EGifPutImageDesc(gif_, 0, 0, width_, height_, false, map) != GIF_ERROR;
    for (int y = 0; ok && y < height_; ++y)
      ok = EGifPutLine(gif_, index.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(width_), width_) !=
           GIF_ERROR;
    GifFreeMapObject(map);
    if (!ok) Fail("a frame");
  }

  std::string Finish() override {
    int error = 0;
    const int result = EGifCloseFile(gif_, &error);
    gif_ = nullptr;
    if (result == GIF_ERROR) throw InputError(std::string("giflib could not finish the file: ") + GifErrorString(error));
    return std::move(bytes_);
  }

 private:
  [[noreturn]] void Fail(const char* what) const {
    throw InputError(Sprintf("giflib could not write %s: %s", what, GifErrorString(gif_->Error)));
  }
  static int Append(GifFileType* gif, const GifByteType* data, int length) {
    static_cast<GifEncoder*>(gif->UserData)->bytes_.append(reinterpret_cast<const char*>(data),
                                                           static_cast<std::size_t>(length));
    return length;
  }

  GifFileType* gif_ = nullptr;
  std::string bytes_;
  int width_, height_, delay_;
};
#endif

#ifdef FLASHVIZ_HAVE_MP4
// FFmpeg's libraries are loaded when an MP4 is asked for, not linked: they bring a hundred more shared libraries
// (every codec's), which every start of flashviz would pay for and a GPU server without them could not run.
// The headers of the build give the types and the sonames.
struct Ffmpeg {
  decltype(&av_log_set_level) log_set_level;
  decltype(&av_strerror) strerror;
  decltype(&av_malloc) malloc;
  decltype(&av_freep) freep;
  decltype(&av_opt_set) opt_set;
  decltype(&av_frame_alloc) frame_alloc;
  decltype(&av_frame_free) frame_free;
  decltype(&av_frame_get_buffer) frame_get_buffer;
  decltype(&av_frame_make_writable) frame_make_writable;
  decltype(&avcodec_find_encoder_by_name) find_encoder_by_name;
  decltype(&avcodec_alloc_context3) alloc_codec;
  decltype(&avcodec_open2) open_codec;
  decltype(&avcodec_parameters_from_context) parameters_from_context;
  decltype(&avcodec_send_frame) send_frame;
  decltype(&avcodec_receive_packet) receive_packet;
  decltype(&avcodec_free_context) free_codec;
  decltype(&av_packet_alloc) packet_alloc;
  decltype(&av_packet_free) packet_free;
  decltype(&av_packet_rescale_ts) packet_rescale_ts;
  decltype(&avformat_alloc_output_context2) alloc_output;
  decltype(&avformat_new_stream) new_stream;
  decltype(&avio_alloc_context) io_alloc;
  decltype(&avio_context_free) io_free;
  decltype(&avio_flush) io_flush;
  decltype(&avformat_write_header) write_header;
  decltype(&av_interleaved_write_frame) write_frame;
  decltype(&av_write_trailer) write_trailer;
  decltype(&avformat_free_context) free_format;
  decltype(&sws_getContext) scale_context;
  decltype(&sws_scale) scale;
  decltype(&sws_freeContext) free_scale;
  std::string error;  // why the libraries could not be loaded ("" when they were)
};

const Ffmpeg& LoadFfmpeg() {
  static const Ffmpeg api = [] {
    Ffmpeg f{};
    const std::string names[] = {Sprintf("libavutil.so.%d", LIBAVUTIL_VERSION_MAJOR),
                                 Sprintf("libavcodec.so.%d", LIBAVCODEC_VERSION_MAJOR),
                                 Sprintf("libavformat.so.%d", LIBAVFORMAT_VERSION_MAJOR),
                                 Sprintf("libswscale.so.%d", LIBSWSCALE_VERSION_MAJOR)};
    void* libs[4] = {};
    for (int k = 0; k < 4; ++k) {
      libs[k] = dlopen(names[k].c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!libs[k]) {
        f.error = Sprintf("MP4 export needs FFmpeg's %s at run time (Debian: apt install libavcodec%d libavformat%d "
                          "libswscale%d)", names[k].c_str(), LIBAVCODEC_VERSION_MAJOR, LIBAVFORMAT_VERSION_MAJOR,
                          LIBSWSCALE_VERSION_MAJOR);
        return f;
      }
    }
    const auto bind = [&](auto& fn, int lib, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(libs[lib], name));
      if (!fn && f.error.empty()) f.error = Sprintf("FFmpeg's %s has no %s", names[lib].c_str(), name);
    };
    bind(f.log_set_level, 0, "av_log_set_level");
    bind(f.strerror, 0, "av_strerror");
    bind(f.malloc, 0, "av_malloc");
    bind(f.freep, 0, "av_freep");
    bind(f.opt_set, 0, "av_opt_set");
    bind(f.frame_alloc, 0, "av_frame_alloc");
    bind(f.frame_free, 0, "av_frame_free");
    bind(f.frame_get_buffer, 0, "av_frame_get_buffer");
    bind(f.frame_make_writable, 0, "av_frame_make_writable");
    bind(f.find_encoder_by_name, 1, "avcodec_find_encoder_by_name");
    bind(f.alloc_codec, 1, "avcodec_alloc_context3");
    bind(f.open_codec, 1, "avcodec_open2");
    bind(f.parameters_from_context, 1, "avcodec_parameters_from_context");
    bind(f.send_frame, 1, "avcodec_send_frame");
    bind(f.receive_packet, 1, "avcodec_receive_packet");
    bind(f.free_codec, 1, "avcodec_free_context");
    bind(f.packet_alloc, 1, "av_packet_alloc");
    bind(f.packet_free, 1, "av_packet_free");
    bind(f.packet_rescale_ts, 1, "av_packet_rescale_ts");
    bind(f.alloc_output, 2, "avformat_alloc_output_context2");
    bind(f.new_stream, 2, "avformat_new_stream");
    bind(f.io_alloc, 2, "avio_alloc_context");
    bind(f.io_free, 2, "avio_context_free");
    bind(f.io_flush, 2, "avio_flush");
    bind(f.write_header, 2, "avformat_write_header");
    bind(f.write_frame, 2, "av_interleaved_write_frame");
    bind(f.write_trailer, 2, "av_write_trailer");
    bind(f.free_format, 2, "avformat_free_context");
    bind(f.scale_context, 3, "sws_getContext");
    bind(f.scale, 3, "sws_scale");
    bind(f.free_scale, 3, "sws_freeContext");
    return f;
  }();
  return api;
}

std::string AvError(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  LoadFfmpeg().strerror(code, text, sizeof(text));
  return text;
}

// H.264 in an MP4 container, written into memory through a seekable custom I/O context (the muxer goes back to
// the start to write the index).
class Mp4Encoder final : public AnimationEncoder {
 public:
  Mp4Encoder(int width, int height, double fps) : ff_(LoadFfmpeg()), width_(width), height_(height) {
    ff_.log_set_level(AV_LOG_ERROR);  // libx264's statistics are not flashviz's to print
    if (ff_.alloc_output(&format_, nullptr, "mp4", nullptr) < 0 || !format_)
      throw InputError("FFmpeg has no MP4 muxer");
    const AVCodec* codec = ff_.find_encoder_by_name("libx264");
    if (!codec) throw InputError("FFmpeg was built without libx264 (H.264): no MP4 export");
    stream_ = ff_.new_stream(format_, nullptr);
    codec_ = ff_.alloc_codec(codec);
    if (!stream_ || !codec_) throw InputError("FFmpeg: out of memory");
    const int rate = std::max(1, static_cast<int>(std::lround(fps)));
    codec_->width = width & ~1;  // 4:2:0 chroma needs even sizes
    codec_->height = height & ~1;
    codec_->time_base = AVRational{1, rate};
    codec_->framerate = AVRational{rate, 1};
    codec_->pix_fmt = AV_PIX_FMT_YUV420P;
    codec_->gop_size = rate;
    if (format_->oformat->flags & AVFMT_GLOBALHEADER) codec_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    // Flat colours and thin lines: a low CRF keeps the numbers in the tiles sharp.
    ff_.opt_set(codec_->priv_data, "preset", "medium", 0);
    ff_.opt_set(codec_->priv_data, "crf", "16", 0);
    if (const int e = ff_.open_codec(codec_, codec, nullptr); e < 0)
      throw InputError("FFmpeg could not open the H.264 encoder: " + AvError(e));
    ff_.parameters_from_context(stream_->codecpar, codec_);
    stream_->time_base = codec_->time_base;
    constexpr int kBuffer = 1 << 16;
    auto* buffer = static_cast<unsigned char*>(ff_.malloc(kBuffer));
    io_ = ff_.io_alloc(buffer, kBuffer, 1, this, nullptr, &Mp4Encoder::Write, &Mp4Encoder::Seek);
    if (!io_) throw InputError("FFmpeg: out of memory");
    format_->pb = io_;
    format_->flags |= AVFMT_FLAG_CUSTOM_IO;
    if (const int e = ff_.write_header(format_, nullptr); e < 0)
      throw InputError("FFmpeg could not start the MP4: " + AvError(e));
    scale_ = ff_.scale_context(width, height, AV_PIX_FMT_RGBA, codec_->width, codec_->height, AV_PIX_FMT_YUV420P,
                               SWS_BICUBIC, nullptr, nullptr, nullptr);
    frame_ = ff_.frame_alloc();
    packet_ = ff_.packet_alloc();
    if (!scale_ || !frame_ || !packet_) throw InputError("FFmpeg: out of memory");
    frame_->format = codec_->pix_fmt;
    frame_->width = codec_->width;
    frame_->height = codec_->height;
    if (ff_.frame_get_buffer(frame_, 0) < 0) throw InputError("FFmpeg: out of memory for a frame");
  }
  ~Mp4Encoder() override {
    ff_.packet_free(&packet_);
    ff_.frame_free(&frame_);
    ff_.free_scale(scale_);
    ff_.free_codec(&codec_);
    if (io_) {
      ff_.freep(&io_->buffer);
      ff_.io_free(&io_);
    }
    ff_.free_format(format_);
  }

  void Add(const RgbaImage& image) override {
    if (image.width != width_ || image.height != height_) throw InputError("a frame of another size");
    if (ff_.frame_make_writable(frame_) < 0) throw InputError("FFmpeg: a frame cannot be written");
    const auto* rgba = reinterpret_cast<const std::uint8_t*>(image.pixels.data());
    const std::uint8_t* planes[1] = {rgba};
    const int strides[1] = {4 * width_};
    ff_.scale(scale_, planes, strides, 0, codec_->height, frame_->data, frame_->linesize);
    frame_->pts = frames_++;
    Send(frame_);
  }

  std::string Finish() override {
    Send(nullptr);  // drain the encoder
    if (const int e = ff_.write_trailer(format_); e < 0)
      throw InputError("FFmpeg could not finish the MP4: " + AvError(e));
    ff_.io_flush(io_);
    return std::move(bytes_);
  }

 private:
  void Send(const AVFrame* frame) {
    if (const int e = ff_.send_frame(codec_, frame); e < 0) throw InputError("H.264 encoder: " + AvError(e));
    while (ff_.receive_packet(codec_, packet_) == 0) {
      ff_.packet_rescale_ts(packet_, codec_->time_base, stream_->time_base);
      packet_->stream_index = stream_->index;
      if (const int e = ff_.write_frame(format_, packet_); e < 0)
        throw InputError("FFmpeg could not write a frame: " + AvError(e));
    }
  }
  static int Write(void* opaque, std::uint8_t* data, int length) {
    auto& self = *static_cast<Mp4Encoder*>(opaque);
    const auto n = static_cast<std::size_t>(length);
    if (self.position_ + n > self.bytes_.size()) self.bytes_.resize(self.position_ + n);
    std::memcpy(self.bytes_.data() + self.position_, data, n);
    self.position_ += n;
    return length;
  }
  static std::int64_t Seek(void* opaque, std::int64_t offset, int whence) {
    auto& self = *static_cast<Mp4Encoder*>(opaque);
    const auto size = static_cast<std::int64_t>(self.bytes_.size());
    if (whence & AVSEEK_SIZE) return size;
    std::int64_t to = offset;
    if ((whence & ~AVSEEK_FORCE) == SEEK_CUR) to += static_cast<std::int64_t>(self.position_);
    else if ((whence & ~AVSEEK_FORCE) == SEEK_END) to += size;
    if (to < 0) return -1;
    self.position_ = static_cast<std::size_t>(to);
    return to;
  }

  const Ffmpeg& ff_;
  int width_, height_;
  AVFormatContext* format_ = nullptr;
  AVStream* stream_ = nullptr;
  AVCodecContext* codec_ = nullptr;
  AVIOContext* io_ = nullptr;
  SwsContext* scale_ = nullptr;
  AVFrame* frame_ = nullptr;
  AVPacket* packet_ = nullptr;
  std::int64_t frames_ = 0;
  std::string bytes_;
  std::size_t position_ = 0;
};
#endif

}  // namespace

std::optional<AnimationFormat> AnimationFormatFor(const std::string& path) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.ends_with(".gif")) return AnimationFormat::kGif;
  if (lower.ends_with(".mp4")) return AnimationFormat::kMp4;
  return std::nullopt;
}

std::string AnimationUnavailableReason([[maybe_unused]] AnimationFormat format) {
#ifndef FLASHVIZ_HAVE_GIF
  if (format == AnimationFormat::kGif)
    return "this flashviz was built without giflib (Debian package libgif-dev): no GIF export";
#endif
#ifndef FLASHVIZ_HAVE_MP4
  if (format == AnimationFormat::kMp4)
    return "this flashviz was built without FFmpeg's headers (Debian packages libavcodec-dev, libavformat-dev, "
           "libswscale-dev): no MP4 export";
#else
  if (format == AnimationFormat::kMp4) return LoadFfmpeg().error;
#endif
  return "";
}

std::unique_ptr<AnimationEncoder> OpenAnimationEncoder(AnimationFormat format, int width, int height, double fps) {
  if (const std::string reason = AnimationUnavailableReason(format); !reason.empty()) throw InputError(reason);
  if (width < 2 || height < 2) throw InputError("an animation needs frames of at least 2 × 2 pixels");
  if (!(fps > 0 && fps <= 120)) throw InputError(Sprintf("--fps %g: expected a rate between 0 and 120", fps));
#ifdef FLASHVIZ_HAVE_GIF
  if (format == AnimationFormat::kGif) return std::make_unique<GifEncoder>(width, height, fps);
#endif
#ifdef FLASHVIZ_HAVE_MP4
  if (format == AnimationFormat::kMp4) return std::make_unique<Mp4Encoder>(width, height, fps);
#endif
  throw InputError("no encoder for this format");
}

}  // namespace flashviz
