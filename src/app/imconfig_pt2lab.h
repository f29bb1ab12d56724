// Dear ImGui compile-time options for the page (IMGUI_USER_CONFIG).
#pragma once

// 32-bit draw indices: big graphs exceed 64k vertices per draw list.
#define ImDrawIdx unsigned int
#define IMGUI_DISABLE_OBSOLETE_FUNCTIONS
#define IMGUI_DISABLE_DEMO_WINDOWS
