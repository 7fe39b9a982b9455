"""Frames from GStreamer's videotestsrc, preprocessed exactly as hybridinfer does.

The patterns model is trained on what the element will feed it, so this file
mirrors kernels/cpu/frame-convert.c operation for operation (float32 arithmetic in
the same order), for the two layouts the demos negotiate: packed RGB and I420.

  resize "stretch", bilinear, pixel centres aligned: output column x samples
      s = clamp((x + 0.5) * in_w / out_w - 0.5, 0, in_w - 1)
      lo = floor(s), hi = min(lo + 1, in_w - 1), w = s - lo
  (rows the same), interpolated horizontally first:
      top = p[y0][lo] + (p[y0][hi] - p[y0][lo]) * wx, bottom likewise on y1,
      v = top + (bottom - top) * wy
  normalised per channel: value = v * (scale / std) + (-mean / std)

I420 frames are sampled per plane (chroma on its half-size plane, centred
between luma samples: ratio in_w / out_w / 2) before the limited-range YUV to
RGB conversion, whose matrix GStreamer picks from the frame height when caps
say nothing (BT.601 up to 576 lines, BT.709 above).

Frames come from gst-launch-1.0 writing raw video to stdout (fdsink), so only
the GStreamer command-line tools are needed, not the Python bindings.
"""
import subprocess

import numpy as np

F32 = np.float32


def _round_up_4(n):
    return (n + 3) & ~3


def frame_layout(fmt, width, height):
    """Plane offsets, strides and the frame size GStreamer uses for raw video."""
    if fmt == "RGB":
        stride = _round_up_4(width * 3)
        return [0], [stride], stride * height
    if fmt == "I420":
        ys = _round_up_4(width)
        cs = _round_up_4((width + 1) // 2)
        ch = (height + 1) // 2
        u = ys * (height + (height & 1))
        v = u + cs * ch
        return [0, u, v], [ys, cs, cs], v + cs * ch
    raise ValueError(f"format {fmt}: only RGB and I420 are mirrored")


def capture(props, width, height, fmt, n_frames):
    """n_frames frames of `videotestsrc PROPS` as a list of raw byte arrays."""
    cmd = (["gst-launch-1.0", "-q", "videotestsrc"] + list(props)
           + [f"num-buffers={n_frames}", "!",
              f"video/x-raw,format={fmt},width={width},height={height}",
              "!", "fdsink", "fd=1"])
    data = subprocess.run(cmd, stdout=subprocess.PIPE, check=True).stdout
    size = frame_layout(fmt, width, height)[2]
    if len(data) != size * n_frames:
        raise RuntimeError(f"{' '.join(cmd)}: got {len(data)} bytes, "
                           f"expected {n_frames} frames of {size}")
    raw = np.frombuffer(data, np.uint8)
    return [raw[i * size:(i + 1) * size] for i in range(n_frames)]


def sample_table(n_out, n_src, ratio):
    """Source neighbours and weight for each of n_out outputs (as the element)."""
    centre = (np.arange(n_out, dtype=np.float64) + 0.5) * ratio
    s = np.clip(centre - 0.5, 0.0, float(n_src - 1))
    lo = np.floor(s).astype(np.int64)
    hi = np.minimum(lo + 1, n_src - 1)
    return lo, hi, (s - lo).astype(F32)


def bilinear(plane, rows, cols):
    """plane: 2-D uint8 (or a channel of one); rows/cols: sample tables."""
    rlo, rhi, wy = rows
    clo, chi, wx = cols
    a, b = plane[rlo], plane[rhi]
    a_lo, a_hi = a[:, clo].astype(F32), a[:, chi].astype(F32)
    b_lo, b_hi = b[:, clo].astype(F32), b[:, chi].astype(F32)
    top = a_lo + (a_hi - a_lo) * wx
    bottom = b_lo + (b_hi - b_lo) * wx
    return top + (bottom - top) * wy[:, None]


def resample_rgb(raw, width, height, out_w, out_h):
    """Packed RGB frame -> (3, out_h, out_w) float32 pixel values 0..255."""
    _, strides, _ = frame_layout("RGB", width, height)
    img = raw.reshape(height, strides[0])[:, :width * 3].reshape(height, width, 3)
    rows = sample_table(out_h, height, height / out_h)
    cols = sample_table(out_w, width, width / out_w)
    return np.stack([bilinear(img[:, :, c], rows, cols) for c in range(3)])


def yuv_matrix(height):
    """(Kr, Kb) GStreamer assumes for YUV caps without colorimetry."""
    return (0.2126, 0.0722) if height > 576 else (0.299, 0.114)


def resample_i420(raw, width, height, out_w, out_h):
    """Limited-range I420 frame -> (3, out_h, out_w) float32 RGB 0..255."""
    offsets, strides, _ = frame_layout("I420", width, height)
    cw, ch = (width + 1) // 2, (height + 1) // 2
    y = raw[offsets[0]:offsets[0] + strides[0] * height].reshape(
        height, strides[0])[:, :width]
    u = raw[offsets[1]:offsets[1] + strides[1] * ch].reshape(ch, strides[1])[:, :cw]
    v = raw[offsets[2]:offsets[2] + strides[2] * ch].reshape(ch, strides[2])[:, :cw]
    rx, ry = width / out_w, height / out_h
    yv = bilinear(y, sample_table(out_h, height, ry), sample_table(out_w, width, rx))
    crows, ccols = sample_table(out_h, ch, ry / 2), sample_table(out_w, cw, rx / 2)
    uv, vv = bilinear(u, crows, ccols), bilinear(v, crows, ccols)

    kr, kb = (F32(k) for k in yuv_matrix(height))
    kg = F32(1) - kr - kb
    y_mul = F32(255) / F32(219)
    y_add = F32(-16) * F32(255) / F32(219)
    c_mul = F32(255) / F32(224)
    vr = F32(2) * (F32(1) - kr)
    ub = F32(2) * (F32(1) - kb)
    vg = F32(2) * kr * (F32(1) - kr) / kg
    ug = F32(2) * kb * (F32(1) - kb) / kg
    yv = yv * y_mul + y_add
    uv = (uv - F32(128)) * c_mul
    vv = (vv - F32(128)) * c_mul
    r = np.clip(yv + vr * vv, 0, 255)
    g = np.clip(yv - ug * uv - vg * vv, 0, 255)
    b = np.clip(yv + ub * uv, 0, 255)
    return np.stack([r, g, b]).astype(F32)


def resample(raw, fmt, width, height, out_w, out_h):
    if fmt == "RGB":
        return resample_rgb(raw, width, height, out_w, out_h)
    return resample_i420(raw, width, height, out_w, out_h)


def normalise(pixels, mean, std, scale):
    """(N, 3, H, W) 0..255 -> the tensor: pixel * (scale/std) - mean/std."""
    mul = np.array([F32(scale) / F32(s) for s in std], F32).reshape(1, 3, 1, 1)
    add = np.array([-F32(m) / F32(s) for m, s in zip(mean, std)], F32).reshape(1, 3, 1, 1)
    return (pixels.astype(F32) * mul + add).astype(F32)
