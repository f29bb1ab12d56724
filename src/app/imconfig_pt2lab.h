// Dear ImGui compile-time options for the page (IMGUI_USER_CONFIG).
#pragma once

// 32-bit draw indices: big graphs exceed 64k vertices per draw list.
#define ImDrawIdx unsigned int
// 32-bit characters: a name, a lesson or a search can hold any of Unicode (an
// emoji U+1F431, CJK Extension B U+20000), drawn from the font pages
// (glyph_wants.h); with 16-bit ones ImGui could neither hold nor draw a
// character past U+FFFF.
#define IMGUI_USE_WCHAR32
#define IMGUI_DISABLE_OBSOLETE_FUNCTIONS
#define IMGUI_DISABLE_DEMO_WINDOWS
