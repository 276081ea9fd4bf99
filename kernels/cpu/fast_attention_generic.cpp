// The same tile code for processors without AVX2/FMA (the compiler lowers the vectors to SSE).
#define FLASHVIZ_TILE_FUNCTION AttentionTileGeneric
#include "kernels/cpu/fast_attention_tile.inc"
