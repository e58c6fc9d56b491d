"""lowbit.show: one code of a format taken apart into its bit fields, as data.

The field widths come from the format's own properties (lowbit.formats:
bits, signed, exponent_bits, mantissa_bits, bias) and the value from
lowbit.decode; a value given instead of a code is first encoded with
lowbit.encode. Nothing here knows a format's rules: the class (zero,
subnormal, normal, inf, nan) is read off the decoded value and the format's
smallest normal, so a format the registry gains is shown without a change
here. The command line's `lowbit show FORMAT CODE` prints the same fields.

>>> lowbit.show(0x7E, "e4m3")
e4m3 0x7e = 0 1111 110: sign +, exponent 15 (2^8 after bias 7), mantissa 0b110 -> normal 448
>>> lowbit.show(500.0, "e4m3", saturate=True).value
448.0
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Optional

import numpy as np

from ._convert import decode, encode
from ._formats import Format, formats


@dataclasses.dataclass(frozen=True)
class Fields:
    """The bit fields of one code (see lowbit.show).

    format: the canonical format name; code: the code as an integer; bits: its
    binary digits, most significant first; sign / exponent / mantissa: the
    fields as integers (sign None for unsigned formats, exponent and mantissa
    None for integer formats, mantissa 0 for E8M0, which has none);
    sign_bits / exponent_bits / mantissa_bits: the same fields as binary
    strings ("" where the format has no such field); cls: "zero",
    "subnormal", "normal", "inf", "nan" or "integer"; value: the decoded value
    (float64, exact for every format of 32 bits or fewer); input: the value
    that was encoded, or None when a code was given.
    """

    format: str
    code: int
    bits: str
    sign: Optional[int]
    exponent: Optional[int]
    mantissa: Optional[int]
    sign_bits: str
    exponent_bits: str
    mantissa_bits: str
    bias: int
    cls: str
    value: float
    input: Optional[float] = None

    @property
    def unbiased_exponent(self) -> Optional[int]:
        """exponent - bias for normal values; 1 - bias for subnormals (the
        exponent they share with the smallest normal); None otherwise."""
        if self.cls == "normal":
            return self.exponent - self.bias
        if self.cls == "subnormal":
            return 1 - self.bias
        return None

    def __repr__(self) -> str:
        width = (len(self.bits) + 3) // 4
        head = f"{self.format} {self.code:#0{width + 2}x} = "
        head += " ".join(p for p in (self.sign_bits, self.exponent_bits, self.mantissa_bits) if p) \
            if self.exponent is not None else self.bits
        parts = []
        if self.sign is not None:
            parts.append(f"sign {'-' if self.sign else '+'}")
        if self.exponent is not None:
            e = self.unbiased_exponent
            parts.append(f"exponent {self.exponent}" + (f" (2^{e} after bias {self.bias})" if e is not None else ""))
        if self.mantissa_bits:
            parts.append(f"mantissa 0b{self.mantissa_bits}")
        value = f"{self.value!r}" if not math.isfinite(self.value) else f"{self.value:.17g}"
        text = head + (": " + ", ".join(parts) if parts else "") + f" -> {self.cls} {value}"
        if self.input is not None:
            text += f" (from {self.input!r})"
        return text


def _format_of(fmt) -> Format:
    if isinstance(fmt, Format):
        return fmt
    if not isinstance(fmt, str):
        raise TypeError(f"a format is a name (str) or a lowbit.Format, got {type(fmt).__name__}")
    try:
        return formats[fmt]
    except KeyError as e:
        raise ValueError(f"unknown format {fmt!r}: {e.args[0] if e.args else ''}") from None


def show(value_or_code, fmt, *, rounding: str = "rne", saturate: bool = False,
         profile: Optional[str] = None) -> Fields:
    """The bit fields, class and value of one code of fmt.

    value_or_code: an int (Python or NumPy integer) is a code of fmt; a float
    is a value, encoded first with lowbit.encode(rounding, saturate, profile).
    So show(1, "e4m3") is code 0x01 (the smallest subnormal) and
    show(1.0, "e4m3") is the code of 1.0 (0x38).
    """
    f = _format_of(fmt)
    given = None
    if isinstance(value_or_code, (bool, np.bool_)):
        raise TypeError("show takes a code (int) or a value (float), got a bool")
    if isinstance(value_or_code, numbers.Integral):
        code = int(value_or_code)
        if not 0 <= code < (1 << f.bits):
            raise ValueError(f"code {code:#x} does not fit {f.name} ({f.bits} bits: 0 to {(1 << f.bits) - 1:#x})")
    elif isinstance(value_or_code, numbers.Real):
        given = float(value_or_code)
        code = int(encode(np.array([given], np.float64), f.name, rounding=rounding, saturate=saturate,
                          profile=profile)[0])
    else:
        raise TypeError(f"show takes a code (int) or a value (float), got {type(value_or_code).__name__}")

    value = float(decode(np.array([code], f.code_dtype), f.name, profile=profile, dtype=np.float64)[0])
    bits = format(code, f"0{f.bits}b")
    sign_width = 1 if f.signed and f.kind != "integer" else 0
    if f.kind == "integer":
        sign = exponent = mantissa = None
        sign_bits = exponent_bits = mantissa_bits = ""
    else:
        sign_bits = bits[:sign_width]
        exponent_bits = bits[sign_width:sign_width + f.exponent_bits]
        mantissa_bits = bits[sign_width + f.exponent_bits:]
        sign = int(sign_bits, 2) if sign_bits else None
        exponent = int(exponent_bits, 2) if exponent_bits else 0
        mantissa = int(mantissa_bits, 2) if mantissa_bits else 0

    if f.kind == "integer":
        cls = "integer"
    elif math.isnan(value):
        cls = "nan"
    elif math.isinf(value):
        cls = "inf"
    elif value == 0.0:
        cls = "zero"
    elif f.smallest_normal is not None and abs(value) < f.smallest_normal:
        cls = "subnormal"
    else:
        cls = "normal"
    return Fields(format=f.name, code=code, bits=bits, sign=sign, exponent=exponent, mantissa=mantissa,
                  sign_bits=sign_bits, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits, bias=f.bias,
                  cls=cls, value=value, input=given)
