# Codec room of the image layer (see CMakeLists.txt): JPEG on libjpeg-turbo,
# PNG on libpng, format sniffing; public header sluice/image/codec.h.
list(APPEND SLUICE_IMAGE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/decode_image.cc
  ${CMAKE_CURRENT_LIST_DIR}/jpeg_decode.cc
  ${CMAKE_CURRENT_LIST_DIR}/jpeg_encode.cc
  ${CMAKE_CURRENT_LIST_DIR}/png_codec.cc)
list(APPEND SLUICE_IMAGE_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/jpeg_codec_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/png_codec_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/decode_image_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/decode_limit_test.cc)
