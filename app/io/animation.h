// Animations of the view for slides: frames of one size, encoded by the libraries Debian packages for the job,
// giflib (GIF, each frame quantized to 256 colours) and FFmpeg's libavcodec/libavformat (MP4, H.264 through
// libx264, yuv420p so every player opens it). The encoded bytes stay in memory; the caller writes them through
// kernels/common/files.h, whole or not at all. A build without a library keeps the other format and says why.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "viz/texture.h"  // RgbaImage

namespace flashviz {

enum class AnimationFormat { kGif, kMp4 };

// The format a file name asks for (".gif", ".mp4"), or nothing.
std::optional<AnimationFormat> AnimationFormatFor(const std::string& path);
// Why this build cannot write `format` ("" when it can).
std::string AnimationUnavailableReason(AnimationFormat format);

class AnimationEncoder {
 public:
  virtual ~AnimationEncoder() = default;
  // Every frame has the encoder's width and height; throws InputError when the library refuses it.
  virtual void Add(const RgbaImage& frame) = 0;
  // The file's bytes once every frame is added.
  virtual std::string Finish() = 0;
};

// width × height frames at `fps`; throws InputError (the reason) when the format is unavailable or the library
// cannot start (an odd size for H.264 is rounded down to even by dropping the last row or column).
std::unique_ptr<AnimationEncoder> OpenAnimationEncoder(AnimationFormat format, int width, int height, double fps);

}  // namespace flashviz
