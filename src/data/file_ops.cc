#include "sluice/data/file_ops.h"

#include <string>
#include <utility>

#include "sluice/io/file_system.h"

namespace sluice::data {
namespace {

// TF's ReadFile check: one filename per call.
Status CheckFilename(const Tensor& t) {
  if (t.dtype() != DType::kString) {
    return errors::InvalidArgument("read_file: the filename must be a string, not ", DTypeName(t.dtype()));
  }
  if (t.shape().rank() != 0) {
    return errors::InvalidArgument("read_file: Input filename tensor must be scalar, but had shape: ",
                                   t.shape().DebugString());
  }
  return Status();
}

}  // namespace

Result<NativeMap> ReadFileMap(const ElementSpec& input, size_t component) {
  if (component >= input.size()) {
    return errors::InvalidArgument("read_file: component ", component, " is out of range (the input has ",
                                   input.size(), " components)");
  }
  const DType dtype = input.dtypes[component];
  if (dtype != DType::kInvalid && dtype != DType::kString) {
    return errors::InvalidArgument("read_file: component ", component, " must be a string, not ", DTypeName(dtype));
  }
  const PartialShape& shape = input.shapes[component];
  if (shape.rank_known() && shape.rank() != 0) {
    return errors::InvalidArgument("read_file: component ", component, " must be a scalar filename, not ",
                                   shape.DebugString());
  }
  NativeMap out;
  out.spec = input;
  out.spec.dtypes[component] = DType::kString;
  out.spec.shapes[component] = PartialShape(TensorShape{});
  out.fn = [component](Element e, ElementIndex) -> Result<Element> {
    if (component >= e.size()) return errors::InvalidArgument("read_file: the element has no component ", component);
    SLUICE_RETURN_IF_ERROR(CheckFilename(e[component]));
    SLUICE_ASSIGN_OR_RETURN(std::string contents,
                            io::ReadFileToString(nullptr, e[component].scalar<std::string>()));
    e[component] = Tensor::Scalar<std::string>(std::move(contents));
    return e;
  };
  return out;
}

}  // namespace sluice::data
