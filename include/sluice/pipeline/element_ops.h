// The element-level work of the native map stages: parse_single_example,
// decode_jpeg and the fused random resized crop of one element, and the
// output signature each gives. The train layer's producer stages
// (producer_ops.h) and the data layer's native map functions
// (sluice/data/map_ops.h) both call these, so the two APIs do the same work.
//
// Pure functions of their arguments: thread-safe. Errors are the ops' own
// (InvalidArgument naming the feature; a corrupt image's), plus
// InvalidArgument when the component is not a string scalar.
#ifndef SLUICE_PIPELINE_ELEMENT_OPS_H_
#define SLUICE_PIPELINE_ELEMENT_OPS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/dtype.h"
#include "sluice/core/element.h"
#include "sluice/core/shape.h"
#include "sluice/core/status.h"
#include "sluice/image/codec.h"
#include "sluice/image/random_resized_crop.h"
#include "sluice/ops/parse_example.h"

namespace sluice::train {

// Each component's dtype and shape, and optionally its name (names empty or
// one per component).
struct ElementSignature {
  std::vector<DType> dtypes;
  std::vector<PartialShape> shapes;
  std::vector<std::string> names;

  size_t size() const { return dtypes.size(); }
};

// InvalidArgument unless component `component` of `sig` is a string scalar.
// `op` names the caller.
Status CheckStringScalar(const ElementSignature& sig, size_t component, std::string_view op);

// The string scalar `component` of `e`.
Result<std::string_view> StringScalarOf(const Element& e, size_t component, std::string_view op);

// The components parse_single_example gives, in the parser's (sorted key)
// order: a FixedLenFeature is one component named by its key; a VarLenFeature
// or SparseFeature three, "<key>/indices", "<key>/values",
// "<key>/dense_shape" (TF's SparseTensor). InvalidArgument for other kinds.
Result<ElementSignature> ParseExampleSignature(const ops::ExampleParser& parser);
// The parsed features of the string scalar `value_index` of `e`, flattened as
// ParseExampleSignature says (num_components of them).
Result<Element> ParseExampleElement(const ops::ExampleParser& parser, const Element& e, size_t value_index,
                                    size_t num_components);

// Replaces string scalar `component` of *e by its decoded uint8 image.
Status DecodeJpegElement(Element* e, size_t component, const image::DecodeJpegOptions& options);
// Replaces string scalar `component` of *e by the float32 crop of `shape`
// (RandomResizedCropShape(options)) whose randomness is `seed`.
Status RandomResizedCropElement(Element* e, size_t component, const image::RandomResizedCropOptions& options,
                                const TensorShape& shape, uint64_t seed);

}  // namespace sluice::train

#endif  // SLUICE_PIPELINE_ELEMENT_OPS_H_
