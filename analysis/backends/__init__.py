"""Analysis backends, chosen by `settings.ANALYSIS_BACKEND` (`configured.get_backend`).

`base` (the interface, its result and error), `local` (on-device models),
`openai` (an OpenAI-compatible vision endpoint), `images` (decoding and
downscaling shared by both).
"""
