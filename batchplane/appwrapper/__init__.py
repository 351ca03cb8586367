"""AppWrappers: converting MCAD's (``mcad.ibm.com/v1beta1``, ``workload.codeflare.dev/v1beta1``) into the
``workload.codeflare.dev/v1beta2`` AppWrapper that Kueue queues (:mod:`batchplane.appwrapper.convert`)."""

from batchplane.appwrapper.convert import (
    MCAD_API_VERSIONS,
    Conversion,
    ConversionError,
    convert,
    is_mcad_appwrapper,
)

__all__ = ["MCAD_API_VERSIONS", "Conversion", "ConversionError", "convert", "is_mcad_appwrapper"]
