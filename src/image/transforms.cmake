# Transform room of the image layer (see CMakeLists.txt): resize, crop/flip,
# colour, normalisation and bounding-box sampling (tf.image's pixel ops).
list(APPEND SLUICE_IMAGE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/resize.cc
  ${CMAKE_CURRENT_LIST_DIR}/resize_kernels.cc
  ${CMAKE_CURRENT_LIST_DIR}/resize_v1.cc
  ${CMAKE_CURRENT_LIST_DIR}/geometry.cc
  ${CMAKE_CURRENT_LIST_DIR}/color.cc
  ${CMAKE_CURRENT_LIST_DIR}/normalize.cc
  ${CMAKE_CURRENT_LIST_DIR}/sample_distorted_bounding_box.cc)
list(APPEND SLUICE_IMAGE_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/resize_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/resize_v1_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/geometry_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/color_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/normalize_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/sample_distorted_bounding_box_test.cc)
# The fused decode -> random resized crop -> flip -> normalise path (it links
# the codec room too).
list(APPEND SLUICE_IMAGE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/random_resized_crop.cc)
list(APPEND SLUICE_IMAGE_TEST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/random_resized_crop_test.cc)
