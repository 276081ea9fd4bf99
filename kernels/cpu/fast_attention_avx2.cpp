// Built with -mavx2 -mfma (kernels/CMakeLists.txt); only called when the processor reports both.
#define FLASHVIZ_TILE_FUNCTION AttentionTileAvx2
#include "kernels/cpu/fast_attention_tile.inc"
